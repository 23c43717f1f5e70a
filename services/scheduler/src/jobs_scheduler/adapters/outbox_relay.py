"""The outbox relay: rows the scheduler's transactions wrote to ``outbox`` (dispatches,
cancel requests) are published to RabbitMQ with confirms and deleted once confirmed.

A ready message goes out at most once. Each pass *claims* its rows (``claimed_at``, committed)
before it publishes them, and settles them after the confirms: confirmed rows are deleted,
rows that never reached the broker are released for the next pass. A relay that dies in
between (the process killed after the broker confirmed, a pass cancelled) leaves claims, not
unsent rows: once a claim is older than ``abandoned_after``, a dispatch it held is dropped
without being published again (it may already be in a ready queue), and its reconciler clock
restarted, so the reconciler re-dispatches the job under a new attempt number only if the
broker never had it (``adapters/reconciler.py``). Other messages (cancel requests, dead-letter
notices) are idempotent for their consumers and are released to be published again.

A dispatch's transaction started the reconciler's clock (``jobs.queued_at``); a dispatch that
waited in the outbox longer than ``clock_slack`` (the broker was away) has it restarted once
published, so the reconciler never takes a message still in a ready queue for a lost one."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import aio_pika
from aio_pika.exceptions import DeliveryError
from sqlalchemy import BigInteger, bindparam, delete, func, select, update
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import jobs, outbox
from jobs_common.rabbit import Outgoing, Publisher
from jobs_common.topology import (
    JOBS_EXCHANGE,
    declare_named_queue,
    is_ready_queue,
    named_queue_of,
)
from jobs_scheduler import metrics
from jobs_scheduler.adapters.sql import any_of, interval_seconds

log = logging.getLogger(__name__)

T = TypeVar("T")

# Unclaimed rows in id order, locked against the other replicas' passes while claimed.
_CLAIMABLE = (
    select(outbox.c.id)
    .where(outbox.c.claimed_at.is_(None))
    .order_by(outbox.c.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
    .subquery("claimable")
)
CLAIM = (
    update(outbox)
    .where(outbox.c.id == _CLAIMABLE.c.id)
    .values(claimed_at=func.now())
    .returning(
        outbox.c.id,
        outbox.c.exchange,
        outbox.c.routing_key,
        outbox.c.job_id,
        outbox.c.message_id,
        outbox.c.message_type,
        outbox.c.trace_id,
        outbox.c.body,
        (outbox.c.created_at < func.now() - interval_seconds(bindparam("slack"))).label("late"),
    )
)
RELAYED = delete(outbox).where(outbox.c.id == any_of("ids", BigInteger()))
RELEASED = update(outbox).where(outbox.c.id == any_of("ids", BigInteger())).values(claimed_at=None)
ABANDONED = (
    select(outbox.c.id, outbox.c.job_id)
    .where(outbox.c.claimed_at < func.now() - interval_seconds(bindparam("after")))
    .order_by(outbox.c.id)
    .with_for_update(skip_locked=True)
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


class Unsent(Exception):
    """The broker never had the message: the publishing channel was closed, or the broker
    returned or refused it (``mandatory`` unroutable, a nack)."""


@dataclass
class Settled:
    """What one pass does with the rows it claimed."""

    confirmed: list[Any] = field(default_factory=list)
    released: list[Any] = field(default_factory=list)  # published again by a later pass
    dropped: list[Any] = field(default_factory=list)  # dispatches the broker may hold

    @classmethod
    def of(cls, rows: Sequence[Any], outcomes: Sequence[BaseException | None]) -> Settled:
        """Confirmed rows go; a row the broker never had, and any message but a dispatch, is
        released; a dispatch whose publish failed after it was sent may be in a ready queue:
        dropped, for the reconciler to judge."""
        settled = cls()
        for row, error in zip(rows, outcomes, strict=True):
            if error is None:
                settled.confirmed.append(row)
            elif isinstance(error, Unsent) or row.job_id is None:
                settled.released.append(row)
            else:
                settled.dropped.append(row)
        return settled


class OutboxRelay:
    """One replica's relay; ``pass_once`` is its :class:`~jobs_scheduler.loops.Loop` step."""

    def __init__(
        self,
        engine: AsyncEngine,
        publishers: dict[str, Publisher],
        *,
        limit: int,
        clock_slack: float,
        abandoned_after: float,
        stop_grace: float = 5.0,
    ) -> None:
        self.engine = engine
        self.publishers = publishers
        self.limit = limit
        self.clock_slack = clock_slack
        self.abandoned_after = abandoned_after
        self.stop_grace = stop_grace
        self._next_sweep = 0.0
        self._declared: set[str] = set()  # named queues this relay declared

    async def pass_once(self) -> int:
        """Settle abandoned claims now and then; claim, publish and settle a batch."""
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self.abandoned_after / 2
            await settle_abandoned(self.engine, self.abandoned_after)
        if not all(publisher.channel_open for publisher in self.publishers.values()):
            return 0  # the broker is away: rows stay unclaimed until the channel is back
        rows = await claim(self.engine, self.limit, self.clock_slack)
        metrics.OUTBOX_PENDING.set(len(rows))
        if not rows:
            return 0
        return await finish_despite_cancel(self._publish_and_settle(rows), timeout=self.stop_grace)

    async def _publish_and_settle(self, rows: Sequence[Any]) -> int:
        await self._declare_named_queues(rows)
        settled = Settled.of(rows, await publish_rows(self.publishers, rows))
        await settle(self.engine, settled)
        late = [row.job_id for row in settled.confirmed if row.job_id is not None and row.late]
        clocks = sorted({*late, *(row.job_id for row in settled.dropped)})
        if clocks:
            await start_reconciler_clocks(self.engine, clocks)
        record(settled)
        return len(settled.confirmed)

    async def _declare_named_queues(self, rows: Sequence[Any]) -> None:
        """Declare the ready queues of a named queue before its first dispatch: a job whose
        type no worker serves yet then waits in its queue (declared alike by the workers)."""
        wanted = {
            queue
            for row in rows
            if row.exchange == JOBS_EXCHANGE
            and (queue := named_queue_of(row.routing_key)) is not None
            and queue not in self._declared
        }
        publisher = self.publishers.get(JOBS_EXCHANGE)
        channel = getattr(publisher.exchange, "channel", None) if publisher else None
        for queue in sorted(wanted):
            if channel is None:
                return
            try:
                await declare_named_queue(channel, queue)
            except Exception:  # its publishes come back unroutable: released, tried again
                log.warning(
                    "named queue not declared",
                    extra={"action": "queue_declare_failed", "queue": queue},
                    exc_info=True,
                )
                continue
            self._declared.add(queue)


async def claim(engine: AsyncEngine, limit: int, clock_slack: float) -> list[Any]:
    """Claim up to ``limit`` unclaimed rows, oldest first, in a transaction of its own."""
    async with engine.begin() as connection:
        rows = (await connection.execute(CLAIM, {"limit": limit, "slack": clock_slack})).all()
    return sorted(rows, key=lambda row: row.id)


async def settle(engine: AsyncEngine, settled: Settled) -> None:
    """Delete the confirmed and dropped rows, release the rest. Should this fail, the claims
    stay and :func:`settle_abandoned` settles them later: never a second publish of a dispatch."""
    gone = [row.id for row in (*settled.confirmed, *settled.dropped)]
    async with engine.begin() as connection:
        if gone:
            await connection.execute(RELAYED, {"ids": gone})
        if settled.released:
            await connection.execute(RELEASED, {"ids": [row.id for row in settled.released]})


async def settle_abandoned(engine: AsyncEngine, after: float) -> int:
    """Claims older than ``after`` seconds (their relay died or hangs): dispatches are dropped
    and their reconciler clocks restarted, other messages released. Returns the rows settled."""
    async with engine.begin() as connection:
        rows = (await connection.execute(ABANDONED, {"after": after})).all()
        if not rows:
            return 0
        dispatches = [row for row in rows if row.job_id is not None]
        others = [row.id for row in rows if row.job_id is None]
        if dispatches:
            await connection.execute(RELAYED, {"ids": [row.id for row in dispatches]})
        if others:
            await connection.execute(RELEASED, {"ids": others})
    if dispatches:
        await start_reconciler_clocks(engine, sorted({row.job_id for row in dispatches}))
        metrics.OUTBOX_ABANDONED.inc(len(dispatches))
    log.warning(
        "outbox claims of a relay that stopped mid-pass settled",
        extra={
            "action": "outbox_abandoned",
            "dispatches_dropped": len(dispatches),
            "released": len(others),
        },
    )
    return len(rows)


async def finish_despite_cancel(work: Awaitable[T], *, timeout: float) -> T:
    """Await ``work``; cancelled meanwhile (the service stops), let it finish for up to
    ``timeout`` seconds first, so confirmed rows are settled rather than left claimed."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task], timeout=timeout)
        if not task.done():
            task.cancel()
        elif not task.cancelled():
            task.exception()  # retrieved: the stop is what this pass reports
        raise


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
    for attempt in range(1, attempts + 1):
        try:
            async with engine.begin() as connection:
                await connection.execute(PUBLISHED, {"ids": list(job_ids)})
            return
        except DBAPIError as exc:
            if not retryable(exc) or attempt == attempts:
                log.error(
                    "reconciler clocks not started",
                    extra={"action": "queued_at_failed", "jobs": len(job_ids)},
                    exc_info=True,
                )
                return
            await asyncio.sleep(0.01 * attempt)


def retryable(exc: DBAPIError) -> bool:
    """A deadlock or a serialization failure: the same statement may succeed next time."""
    return (getattr(exc.orig, "sqlstate", None) or "") in ("40P01", "40001")


def _amqp(row: Any) -> aio_pika.Message:
    return aio_pika.Message(
        body=row.body,
        content_type="application/json",
        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        message_id=str(row.message_id),
        correlation_id=row.trace_id,
        type=row.message_type,
        headers={"trace_id": row.trace_id, "v": 1},
    )


async def publish_rows(
    publishers: dict[str, Publisher], rows: Sequence[Any]
) -> list[BaseException | None]:
    """Publish outbox rows, each on its own exchange, all confirms in flight together. A
    failure is :class:`Unsent` when the broker certainly does not hold the message."""

    async def one(row: Any) -> BaseException | None:
        publisher = publishers.get(row.exchange)
        if publisher is None or not publisher.channel_open:
            return Unsent(f"no open publishing channel for {row.exchange}")
        try:
            await publisher.publish_raw(Outgoing(row.routing_key, _amqp(row)))
        except DeliveryError as exc:  # returned (unroutable) or nacked: not in a queue
            return Unsent(repr(exc))
        except Exception as exc:
            return exc
        return None

    return list(await asyncio.gather(*(one(row) for row in rows)))
