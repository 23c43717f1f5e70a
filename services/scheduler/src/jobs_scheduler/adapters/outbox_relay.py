"""The outbox relay: rows the scheduler's transactions wrote to ``outbox`` (dispatches,
cancel requests, claim answers) are published to RabbitMQ with confirms and deleted once
confirmed.

A pass locks its rows (``FOR UPDATE SKIP LOCKED``, held until it ends) and, before it
publishes them, commits one ``outbox_passes`` row naming them; the transaction that deletes
the rows the broker confirmed deletes that row too. A pass that dies in between (the process
killed after the broker confirmed, a pass cancelled, a lost database connection) leaves its
rows unlocked and named by a pass row: the next pass that locks such a row knows it may
already be in the broker's hands. It publishes the row again at once: a dispatch as a *copy*
(the ``x-jobs-copy`` header), which a worker claims before it runs (``app/claims.py``), so a
second copy of a ready message is harmless and a scheduler crash delays a job by seconds, not
by the reconciler's two minutes. Other messages are idempotent for their consumers. A
dispatch whose publish failed after it was sent (the connection lost before the confirm) is
left named by this pass's row, so the next pass sends it as a copy too; one the broker
certainly never had is left for the next pass as it is.

A project's paused queue keeps its dispatches here, and a limited one sends them within its
budget (``adapters/flow_control.py``, docs/flow-control.md): the rest wait in the outbox, their
jobs ``queued``, and a pass does not even lock them.

A dispatch's transaction started the reconciler's clock (``jobs.queued_at``); a dispatch that
waited in the outbox longer than ``clock_slack`` (the broker was away) has it restarted once
published, so the reconciler never takes a message still in a ready queue for a lost one."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, partial
from typing import Any, TypeVar

import aio_pika
import orjson
from aio_pika.exceptions import DeliveryError
from sqlalchemy import BigInteger, Text, bindparam, cast, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.amqp_batch import NotSent
from jobs_common.contracts import COPY_HEADER, FRESH_HEADER, utcnow
from jobs_common.jobstore import jobs, outbox, outbox_passes, queues
from jobs_common.rabbit import Outgoing, Publisher
from jobs_common.topology import (
    JOBS_EXCHANGE,
    declare_lane,
    declare_named_queue,
    is_ready_queue,
    lane_type,
    named_queue_of,
)
from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.fair_dispatch import FairOrder, ProjectWeights, fair_rows
from jobs_scheduler.adapters.flow_control import FlowControl
from jobs_scheduler.adapters.queue_depths import QueueDepths
from jobs_scheduler.adapters.ready_window import ReadyWindow
from jobs_scheduler.adapters.retried import commit_retried, lock_conflict
from jobs_scheduler.adapters.routing import RoutingView
from jobs_scheduler.adapters.set_based import ArrayRows, any_of, interval_seconds
from jobs_scheduler.domain.claims import fresh_window
from jobs_scheduler.domain.fair_dispatch import fair_order
from jobs_scheduler.domain.flow_control import Budget, Pair, within
from jobs_scheduler.domain.routing import Wait, route

log = logging.getLogger(__name__)

T = TypeVar("T")

# Once a pass finds more rows than it takes, passes take them in fair order for this long.
FAIR_AFTER_BACKLOG_SECONDS = 1.0
# How soon the next pass follows one whose ready window held dispatches back.
WINDOW_PASS_SECONDS = 0.1

# A row named by a pass row that no live pass holds (its lock is gone): its pass died.
_ORPHANED = (
    select(outbox_passes.c.id)
    .where(outbox.c.id == func.any(outbox_passes.c.ids))
    .exists()
    .label("orphaned")
)
# The fresh window a dead pass gave its first copies (its copies ask past it).
_PASS_FRESH_UNTIL = (
    select(func.max(outbox_passes.c.fresh_until))
    .where(outbox.c.id == func.any(outbox_passes.c.ids))
    .scalar_subquery()
    .label("pass_fresh_until")
)
# A ready dispatch of a paused queue (docs/flow-control.md) stays in the outbox, its job
# ``queued``: no TTL runs out on it, and the reconciler leaves a job whose dispatch is here.
_PAUSED = (
    select(queues.c.id)
    .where(
        queues.c.paused,
        queues.c.project_id == outbox.c.project_id,
        queues.c.name == outbox.c.queue,
    )
    .exists()
)
_COLUMNS = (
    outbox.c.id,
    outbox.c.exchange,
    outbox.c.routing_key,
    outbox.c.job_id,
    outbox.c.message_id,
    outbox.c.message_type,
    outbox.c.trace_id,
    outbox.c.body,
    outbox.c.project_id,
    outbox.c.queue,
    (outbox.c.created_at < func.now() - interval_seconds(bindparam("slack"))).label("late"),
    _ORPHANED,
    _PASS_FRESH_UNTIL,
)
# The limited queues with no budget left this pass, and the values of a queue's concurrency
# key with their limit in flight (``adapters/flow_control.py``): their dispatches are not even
# locked, so a pass reaches the rows behind them.
SPENT = ArrayRows("spent", project_id=UUID(as_uuid=True), queue=Text())
SPENT_PROJECTS = ArrayRows("spent_projects", project_id=UUID(as_uuid=True))
SPENT_KEYS = ArrayRows(
    "spent_keys", project_id=UUID(as_uuid=True), queue=Text(), field=Text(), value=Text()
)
_PAYLOAD = cast(func.convert_from(outbox.c.body, "UTF8"), JSONB)["payload"]
_NOT_SPENT = ~(
    select(SPENT.c.project_id)
    .select_from(SPENT.table)
    .where(SPENT.c.project_id == outbox.c.project_id, SPENT.c.queue == outbox.c.queue)
    .exists()
)
_PROJECT_NOT_SPENT = ~(
    select(SPENT_PROJECTS.c.project_id)
    .select_from(SPENT_PROJECTS.table)
    .where(SPENT_PROJECTS.c.project_id == outbox.c.project_id)
    .exists()
)
_KEY_NOT_SPENT = ~(
    select(SPENT_KEYS.c.project_id)
    .select_from(SPENT_KEYS.table)
    .where(
        SPENT_KEYS.c.project_id == outbox.c.project_id,
        SPENT_KEYS.c.queue == outbox.c.queue,
        _PAYLOAD.op("->>")(SPENT_KEYS.c.field) == SPENT_KEYS.c.value,
    )
    .exists()
)
# The ready queues that hold a full window (``adapters/ready_window.py``).
_ROOM_LEFT = outbox.c.routing_key != func.all(bindparam("full", type_=ARRAY(Text())))


def _conditions(*, spent: bool, keys: bool, full: bool, projects: bool = False) -> list[Any]:
    """A pass's rows: not a paused queue's, and not of the spent queues, projects, key values
    and full ready queues named."""
    conditions = [~_PAUSED]
    if spent:
        conditions.append(_NOT_SPENT)
    if projects:
        conditions.append(_PROJECT_NOT_SPENT)
    if keys:
        conditions.append(_KEY_NOT_SPENT)
    if full:
        conditions.append(_ROOM_LEFT)
    return conditions


@cache
def lock_batch(
    *,
    spent: bool = False,
    keys: bool = False,
    full: bool = False,
    projects: bool = False,
    chosen: bool = False,
) -> Any:
    """Lock a batch of rows (``FOR UPDATE SKIP LOCKED``, in id order, the consumers' lock
    order): the oldest ``limit`` rows, or those ``chosen`` in fair order (``fair_ids``)."""
    conditions = _conditions(spent=spent, keys=keys, full=full, projects=projects)
    statement = (
        select(*_COLUMNS).where(outbox.c.id == any_of("chosen", BigInteger()), *conditions)
        if chosen
        else select(*_COLUMNS).where(*conditions).limit(bindparam("limit"))
    )
    return statement.order_by(outbox.c.id).with_for_update(of=outbox, skip_locked=True)


@cache
def fair_batch(
    *, spent: bool = False, keys: bool = False, full: bool = False, projects: bool = False
) -> Any:
    """The first ``limit`` rows in fair order (``adapters/fair_dispatch.py``): id and ready
    queue."""
    return fair_rows(
        _conditions(spent=spent, keys=keys, full=full, projects=projects), bindparam("limit")
    )


RELAYED = delete(outbox).where(outbox.c.id == any_of("ids", BigInteger()))
PASS_DONE = delete(outbox_passes).where(outbox_passes.c.id == bindparam("pass_id"))
PASS_NARROWED = (
    update(outbox_passes)
    .where(outbox_passes.c.id == bindparam("pass_id"))
    .values(ids=bindparam("ids", type_=ARRAY(BigInteger())))
)
# Pass rows of dead passes none of whose rows is left but those settled now.
DEAD_PASSES_DONE = delete(outbox_passes).where(
    outbox_passes.c.ids.overlap(bindparam("ids", type_=ARRAY(BigInteger()))),
    ~select(outbox.c.id)
    .where(
        outbox.c.id == func.any(outbox_passes.c.ids),
        outbox.c.id != func.all(bindparam("ids", type_=ARRAY(BigInteger()))),
    )
    .exists(),
)
# Rows locked in id order first, as every batch of the consumers locks them: an
# ``UPDATE ... WHERE id = ANY(...)`` alone locks in the order of the index scan and deadlocked
# with a batch of results.
_CLOCKED = (
    select(jobs.c.id)
    .where(jobs.c.id == any_of("ids", UUID(as_uuid=True)), jobs.c.status == "queued")
    .order_by(jobs.c.id)
    .with_for_update()
    .subquery("clocked")
)
PUBLISHED = update(jobs).where(jobs.c.id == _CLOCKED.c.id).values(queued_at=func.now())


@dataclass
class Settled:
    """What one pass does with the rows it claimed."""

    confirmed: list[Any] = field(default_factory=list)
    released: list[Any] = field(default_factory=list)  # left for a later pass
    dropped: list[Any] = field(default_factory=list)  # dispatches the broker may hold: copies

    @classmethod
    def of(cls, rows: Sequence[Any], outcomes: Sequence[BaseException | None]) -> Settled:
        """Confirmed rows go; a row the broker never had (never sent; returned as unroutable
        or nacked), and any message but a dispatch, is left for the next pass; a dispatch
        whose publish failed after it was sent may be in a ready queue: the next pass sends it
        as a copy."""
        settled = cls()
        for row, error in zip(rows, outcomes, strict=True):
            if error is None:
                settled.confirmed.append(row)
            elif isinstance(error, NotSent | DeliveryError) or row.job_id is None:
                settled.released.append(row)
            else:
                settled.dropped.append(row)
        return settled


class OutboxRelay:
    """One replica's relay; ``pass_once`` is its :class:`~jobs_scheduler.api.sweeps.Loop` step."""

    def __init__(
        self,
        engine: AsyncEngine,
        publishers: dict[str, Publisher],
        *,
        limit: int,
        clock_slack: float,
        stop_grace: float = 5.0,
        routing: RoutingView | None = None,
        on_waiting: Callable[[list[Wait]], Awaitable[None]] | None = None,
        depths: QueueDepths | None = None,
        fresh_drain_per_second: float = 100.0,
        flow: FlowControl | None = None,
        window: ReadyWindow | None = None,
    ) -> None:
        self.engine = engine
        self.publishers = publishers
        self.limit = limit
        self.clock_slack = clock_slack
        self.stop_grace = stop_grace
        # Dispatches go only where a live worker serves their type (domain/routing.py); None:
        # each to the queue it was written for.
        self.routing = routing
        self.on_waiting = on_waiting
        # The backlog ahead of each dispatch sizes its fresh window (None: FRESH_DISPATCH).
        self.depths = depths
        self.fresh_drain_per_second = fresh_drain_per_second
        # A project's queue limits (None: none applied).
        self.flow = flow
        # The bounded ready window and fair dispatch (None: every dispatch goes at once).
        self.window = window
        self.weights = ProjectWeights()
        self.fair = FairOrder()
        self._fair_until = 0.0  # a backlog was seen: passes take rows in fair order till then
        # The last pass left a limited queue's dispatches waiting for a slot or a token: a job
        # that moves on (its commit) wakes the relay (service.py).
        self.waiting_for_slots = False
        self._declared: set[tuple[str, str]] = set()  # ("lane"|"queue", name) declared here

    def sooner(self) -> float | None:
        """While a ready window holds dispatches back, the next pass is due within
        ``WINDOW_PASS_SECONDS``: the workers drain the window faster than the relay's interval
        would refill it."""
        if self.window is not None and self.window.holding:
            return WINDOW_PASS_SECONDS
        return None

    async def pass_once(self) -> int:
        """Lock, record, publish and settle a batch. Cancelled meanwhile (the service stops),
        the pass finishes for up to ``stop_grace`` seconds first."""
        if not all(publisher.channel_open for publisher in self.publishers.values()):
            return 0  # the broker is away: nothing is taken until the channel is back
        return await finish_despite_cancel(self._pass(), timeout=self.stop_grace)

    async def _pass(self) -> int:
        async with self.engine.connect() as connection, connection.begin():
            budgets: dict[Pair, Budget] = {}
            project_slots: dict[uuid.UUID, int] = {}
            if self.flow is not None:
                budgets = await self.flow.budgets(connection)
                project_slots = await self.flow.project_slots(connection)
            rows = await self._lock(connection, budgets, project_slots)
            metrics.OUTBOX_PENDING.set(len(rows))
            if not rows:
                return 0
            # A dispatch a dead pass may have published goes again as a copy (claimed first).
            copies = {row.id for row in rows if row.orphaned and row.job_id is not None}
            keys, waits = await self._routes(connection, rows, copies)
            waiting = {row_id for row_id, _ in waits}
            rows = [row for row in rows if row.id not in waiting]
            pass_id = uuid.uuid4()
            await self._declare_named_queues(rows, keys)
            fresh_until, firsts = await self._fresh_until(rows, keys, copies)
            await record_pass(self.engine, pass_id, [row.id for row in rows], fresh_until)
            settled = Settled.of(
                rows,
                await publish_rows(
                    self.publishers,
                    rows,
                    copies=copies,
                    keys=keys,
                    fresh_until=fresh_until,
                    firsts=firsts,
                ),
            )
            gone = [row.id for row in settled.confirmed] + sorted(waiting)
            if gone:
                await connection.execute(RELAYED, {"ids": gone})
            if settled.dropped:  # maybe in the broker: named by this pass, sent as copies next
                await connection.execute(
                    PASS_NARROWED, {"pass_id": pass_id, "ids": [row.id for row in settled.dropped]}
                )
            else:
                await connection.execute(PASS_DONE, {"pass_id": pass_id})
            if copies and gone:
                await connection.execute(DEAD_PASSES_DONE, {"ids": gone})
            if budgets and self.flow is not None:
                await self.flow.spend(connection, budgets, _sent_by_queue(settled.confirmed))
        if self.window is not None:
            self.window.sent(
                Counter(row.routing_key for row in settled.confirmed if _is_dispatch(row))
            )
        late = [
            row.job_id
            for row in settled.confirmed
            if row.job_id is not None and (row.late or row.id in copies)
        ]
        if late:
            await start_reconciler_clocks(self.engine, sorted(set(late)))
        sent_copies = [row for row in settled.confirmed if row.id in copies]
        if sent_copies:
            metrics.OUTBOX_COPIES.inc(len(sent_copies))
            log.warning(
                "dispatches a relay pass may have published sent again as copies",
                extra={"action": "outbox_copies", "copies": len(sent_copies)},
            )
        record(settled)
        if waits:
            metrics.DISPATCHES_WAITING.inc(len(waits))
            if self.on_waiting is not None:
                await self.on_waiting([wait for _, wait in waits])
        return len(settled.confirmed)

    async def _lock(
        self,
        connection: AsyncConnection,
        budgets: dict[Pair, Budget],
        project_slots: dict[uuid.UUID, int],
    ) -> list[Any]:
        """Lock a batch of rows, leaving out the dispatches of limited queues and projects
        past their budget (they wait for a slot or a token) and of ready queues holding a full
        window; with a backlog, in fair order, and each ready queue's within its window's
        room."""
        parameters: dict[str, Any] = {"limit": self.limit, "slack": self.clock_slack}
        spent = [pair for pair, budget in budgets.items() if budget.slots <= 0]
        spent_projects = sorted(project for project, left in project_slots.items() if left <= 0)
        spent_keys = [
            (*pair, budget.key.field, value)
            for pair, budget in budgets.items()
            if budget.key is not None and budget.slots > 0
            for value in budget.key.spent()
        ]
        full = await self.window.full() if self.window is not None else []
        if spent:
            parameters |= SPENT.params(spent)
        if spent_keys:
            parameters |= SPENT_KEYS.params(spent_keys)
        if spent_projects:
            parameters |= SPENT_PROJECTS.params((project,) for project in spent_projects)
        if full:
            parameters["full"] = full
        flags = {
            "spent": bool(spent),
            "keys": bool(spent_keys),
            "full": bool(full),
            "projects": bool(spent_projects),
        }
        chosen: list[int] = []
        if self.window is not None and (
            time.monotonic() < self._fair_until or self.window.holding
        ):  # a backlog: seen lately, or behind a window that holds dispatches back
            chosen = await self.fair.chosen(
                connection, fair_batch(**flags), parameters, self.limit, set(full)
            )
        if chosen:
            parameters["chosen"] = chosen
        rows = list(
            (await connection.execute(lock_batch(**flags, chosen=bool(chosen)), parameters)).all()
        )
        if self.window is not None and len(rows) >= self.limit:
            self._fair_until = time.monotonic() + FAIR_AFTER_BACKLOG_SECONDS
        if self.flow is not None:
            pairs = {pair for row in rows if (pair := _pair(row)) is not None}
            budgets.update(await self.flow.late_budgets(connection, pairs, budgets))
            project_slots.update(
                await self.flow.late_project_slots(connection, pairs, project_slots)
            )
        self.waiting_for_slots = bool(spent or spent_keys or spent_projects)
        if budgets or project_slots:
            keyed = {pair for pair, budget in budgets.items() if budget.key is not None}
            sent = within(
                [
                    (row.id, pair, _payload(row) if pair in keyed else None)
                    for row in rows
                    for pair in (_pair(row),)
                ],
                budgets,
                project_slots,
            )
            self.waiting_for_slots |= len(sent) < len(rows)
            rows = [row for row in rows if row.id in sent]
        held: set[int] = set()
        if self.window is not None:
            rows, held = await self._within_windows(connection, self.window, rows, chosen)
        if chosen:  # sent, left out or gone: a later read of the fair order finds those left
            self.fair.drop(set(chosen) - held)
        return rows

    async def _within_windows(
        self, connection: AsyncConnection, window: ReadyWindow, rows: list[Any], chosen: list[int]
    ) -> tuple[list[Any], set[int]]:
        """The rows without the dispatches each ready queue has no room for (and the ids of
        those): those that go are the queue's first in fair order: the order ``chosen`` holds
        (read over the whole outbox, so a project served in earlier passes stays behind one
        that waited), else among these rows (``domain/fair_dispatch.py``)."""
        place = {row_id: index for index, row_id in enumerate(chosen)}
        by_queue: dict[str, list[Any]] = {}
        for row in rows:
            if _is_dispatch(row):
                by_queue.setdefault(row.routing_key, []).append(row)
        held: set[int] = set()
        for queue, waiting in by_queue.items():
            room = await window.room(queue, len(waiting))
            window.held(queue, len(waiting) > room)
            if len(waiting) > room:
                if place:
                    ordered = sorted(waiting, key=lambda row: place.get(row.id, len(place)))
                else:
                    weights = await self.weights.read(connection)
                    ordered = fair_order(waiting, row_id=_row_id, pair=_pair, weights=weights)
                held.update(row.id for row in ordered[room:])
        return ([row for row in rows if row.id not in held] if held else rows), held

    async def _routes(
        self, connection: AsyncConnection, rows: Sequence[Any], copies: set[int]
    ) -> tuple[dict[int, str], list[tuple[int, Wait]]]:
        """Each ready dispatch's routing key where it differs from the row's (a type's lane),
        and the dispatches no live worker can take (their jobs wait)."""
        keys: dict[int, str] = {}
        waits: list[tuple[int, Wait]] = []
        if self.routing is None:
            return keys, waits
        dispatches = [
            row
            for row in rows
            if row.job_id is not None
            and row.exchange == JOBS_EXCHANGE
            and is_ready_queue(row.routing_key)
        ]
        if not dispatches:
            return keys, waits
        live = await self.routing.workers(connection)
        for row in dispatches:
            body = orjson.loads(row.body)
            where = route(str(body.get("job_type")), row.routing_key, live)
            if where.routing_key is None:
                unsent = not body.get("resent") and row.id not in copies
                attempt = int(body.get("attempt", 1))
                waits.append((row.id, Wait(row.job_id, attempt, where.reason, unsent)))
            elif where.routing_key != row.routing_key:
                keys[row.id] = where.routing_key
        return keys, waits

    async def _fresh_until(
        self, rows: Sequence[Any], keys: Mapping[int, str], copies: Set[int]
    ) -> tuple[datetime | None, set[int]]:
        """Until when the first copies of this pass's first dispatches run unasked: long
        enough for the backlog ahead of the last of them in its queue to drain; and which
        rows they are (None: none here, or nothing known of the queues: each dispatch's own
        ``fresh_until``)."""
        if self.depths is None:
            return None, set()
        firsts = {row.id for row in rows if row.id not in copies and _first_dispatch(row, keys)}
        joining = Counter(keys.get(row.id, row.routing_key) for row in rows if row.id in firsts)
        backlog = 0
        for key, count in joining.items():
            depth = await self.depths.depth(key)
            backlog = max(backlog, (depth or 0) + count)
        if not joining:
            return None, set()
        window = fresh_window(backlog, drain_per_second=self.fresh_drain_per_second)
        return utcnow() + window, firsts

    async def _declare_named_queues(
        self, rows: Sequence[Any], keys: Mapping[int, str] | None = None
    ) -> None:
        """Declare the ready queues of a named queue, and a type's lane, before the first
        dispatch to it (declared alike by the workers)."""
        keys = keys or {}
        wanted: set[tuple[str, str]] = set()
        for row in rows:
            key = keys.get(row.id, row.routing_key)
            if row.exchange != JOBS_EXCHANGE:
                continue
            if (job_type := lane_type(key)) is not None:
                wanted.add(("lane", job_type))
            elif (queue := named_queue_of(key)) is not None:
                wanted.add(("queue", queue))
        wanted -= self._declared
        publisher = self.publishers.get(JOBS_EXCHANGE)
        channel = getattr(publisher.exchange, "channel", None) if publisher else None
        for kind, queue in sorted(wanted):
            if channel is None:
                return
            try:
                if kind == "lane":
                    await declare_lane(channel, queue)
                else:
                    await declare_named_queue(channel, queue)
            except Exception:  # its publishes come back unroutable: left for the next pass
                log.warning(
                    "named queue not declared",
                    extra={"action": "queue_declare_failed", "queue": queue},
                    exc_info=True,
                )
                continue
            self._declared.add((kind, queue))


async def record_pass(
    engine: AsyncEngine, pass_id: uuid.UUID, ids: list[int], fresh_until: datetime | None = None
) -> None:
    """Commit, on a connection of its own, which rows this pass is about to publish (and the
    fresh window it gives their first copies)."""
    async with engine.begin() as connection:
        await connection.execute(
            insert(outbox_passes).values(id=pass_id, ids=ids, fresh_until=fresh_until)
        )


async def finish_despite_cancel(work: Awaitable[T], *, timeout: float) -> T:
    """Await ``work``; cancelled meanwhile (the service stops), let it finish for up to
    ``timeout`` seconds first, so confirmed rows are settled rather than left to the next
    pass as a dead one's. Cut off then, it is waited for (as long again at most) while it
    unwinds, its transaction rolled back: its row locks are gone when the stop is reported
    (the next pass skipped the rows it still held)."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task], timeout=timeout)
        if not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=timeout)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: the stop is what this pass reports
        raise


def _pair(row: Any) -> Pair | None:
    """A ready dispatch's (project, queue); None for any other row."""
    if row.project_id is None or row.queue is None:
        return None
    return (row.project_id, row.queue)


def _is_dispatch(row: Any) -> bool:
    """A job's ready message (what a ready window holds)."""
    return (
        row.job_id is not None and row.exchange == JOBS_EXCHANGE and is_ready_queue(row.routing_key)
    )


def _row_id(row: Any) -> int:
    return int(row.id)


def _payload(row: Any) -> object:
    return orjson.loads(row.body).get("payload")


def _sent_by_queue(rows: Sequence[Any]) -> Counter[Pair]:
    return Counter(pair for row in rows if (pair := _pair(row)) is not None)


def record(settled: Settled) -> None:
    metrics.OUTBOX_PUBLISHED.inc(len(settled.confirmed))
    for queue, count in Counter(
        row.routing_key
        for row in settled.confirmed
        if row.exchange == JOBS_EXCHANGE and is_ready_queue(row.routing_key)
    ).items():
        metrics.JOBS_DISPATCHED.labels(queue).inc(count)
    failed = len(settled.released) + len(settled.dropped)
    if failed:
        metrics.OUTBOX_FAILED.inc(failed)
        log.warning(
            "outbox publishes failed",
            extra={
                "action": "outbox_failed",
                "released": len(settled.released),
                "dispatches_dropped": len(settled.dropped),
            },
        )
    if settled.dropped:
        metrics.OUTBOX_ABANDONED.inc(len(settled.dropped))


async def start_reconciler_clocks(
    engine: AsyncEngine, job_ids: Sequence[Any], *, attempts: int = 5
) -> None:
    """``queued_at = now()`` for dispatches published late or dropped (in id order, the
    consumers' lock order), retried when PostgreSQL picks it as a deadlock victim. Left at the
    dispatch's own time, the reconciler could re-dispatch a job whose message is still in its
    ready queue."""
    try:
        await commit_retried(
            engine,
            partial(_execute, PUBLISHED, {"ids": list(job_ids)}),
            attempts=attempts,
            pause=0.01,
            retry_if=lock_conflict,
        )
    except Exception:
        log.error(
            "reconciler clocks not started",
            extra={"action": "queued_at_failed", "jobs": len(job_ids)},
            exc_info=True,
        )


async def _execute(statement: Any, parameters: dict[str, Any], connection: AsyncConnection) -> None:
    await connection.execute(statement, parameters)


def _first_dispatch(row: Any, keys: Mapping[int, str]) -> bool:
    """A ready dispatch sent for the first time: not ``resent`` (a hand-back's or a release's
    claim counts from the attempt's first dispatch, which a window of this pass would only
    push later)."""
    return (
        row.job_id is not None
        and row.exchange == JOBS_EXCHANGE
        and is_ready_queue(keys.get(row.id, row.routing_key))
        and not orjson.loads(row.body).get("resent")
    )


def _amqp(row: Any, *, copy: bool = False, fresh_until: datetime | None = None) -> aio_pika.Message:
    headers: dict[str, Any] = {"trace_id": row.trace_id, "v": 1}
    if copy:
        headers[COPY_HEADER] = 1
    if fresh_until is not None:
        headers[FRESH_HEADER] = round(fresh_until.timestamp() * 1000)
    return aio_pika.Message(
        body=row.body,
        content_type="application/json",
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=str(row.message_id),
        correlation_id=row.trace_id,
        type=row.message_type,
        headers=headers,
    )


async def publish_rows(
    publishers: dict[str, Publisher],
    rows: Sequence[Any],
    *,
    copies: Set[int] = frozenset(),
    keys: Mapping[int, str] | None = None,
    fresh_until: datetime | None = None,
    firsts: Set[int] = frozenset(),
) -> list[BaseException | None]:
    """Publish outbox rows, each on its own exchange (with the routing key ``keys`` gives
    it, else its own), all confirms in flight together (the rows in ``copies`` marked as
    copies, with the fresh window their dead pass gave the first copies; the first
    dispatches, ``firsts``, with this pass's ``fresh_until``). A failure is :class:`NotSent`
    when the message never left (no open channel), as ``publish_many`` tells it."""
    keys = keys or {}

    def fresh(row: Any) -> datetime | None:
        if row.id in copies:
            return getattr(row, "pass_fresh_until", None)
        return fresh_until if row.id in firsts else None

    outcomes: list[BaseException | None] = [None] * len(rows)
    by_exchange: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_exchange.setdefault(row.exchange, []).append(index)

    async def publish(exchange: str, indexes: list[int]) -> None:
        publisher = publishers.get(exchange)
        if publisher is None or not publisher.channel_open:
            for index in indexes:
                outcomes[index] = NotSent(f"no open publishing channel for {exchange}")
            return
        items = [
            Outgoing(
                keys.get(rows[i].id, rows[i].routing_key),
                _amqp(rows[i], copy=rows[i].id in copies, fresh_until=fresh(rows[i])),
            )
            for i in indexes
        ]
        for index, error in zip(indexes, await publisher.publish_many(items), strict=True):
            outcomes[index] = error

    await asyncio.gather(*(publish(name, indexes) for name, indexes in by_exchange.items()))
    return outcomes
