"""The outbox relay: claim pending submissions, publish them with confirms, mark them sent
(gathered: :mod:`jobs_submission.app.mark_sent`).

Safe with any number of replicas: a claim is a lease fenced by a token; a relay marks an entry
sent only while its token still holds it. A crash between publish and mark leaves the claim to
expire and the entry is published again, which the scheduler's idempotent insert absorbs.
Batch members claimed this way are published only once their batch is accepted
(:mod:`jobs_submission.app.batch_gate`).

Every MongoDB query of a pass is an index lookup whose cost does not grow with the collection:
the claim (``outbox_state_nextAttemptAtMs``, then ``_id``), the claimed members' batches
(``batches._id``), the settling (``_id``) and the
outbox gauges (one scan of at most ``relay_pending_count_limit`` keys of
``outbox_state_createdAtMs_pending``). No count or aggregation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from jobs_common.contracts import JobsSubmitted
from jobs_common.rabbit import Outgoing, Publisher, amqp_message
from jobs_common.topology import SUBMITTED
from jobs_submission.adapters import metrics
from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import Document, SubmissionStore
from jobs_submission.adapters.rabbit import BrokerUnavailable, BusHolder
from jobs_submission.app.batch_gate import publishable
from jobs_submission.app.handoff import HandOff
from jobs_submission.app.mark_sent import SentEntries
from jobs_submission.domain.documents import job_submitted
from jobs_submission.domain.outbox import pack, retry_delay_ms
from jobs_submission.settings import Settings

log = logging.getLogger(__name__)

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class OutboxRelay:
    def __init__(
        self,
        *,
        store: SubmissionStore,
        bus: BusHolder,
        settings: Settings,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.store = store
        self.batches = BatchStore(store)
        self.bus = bus
        self.settings = settings
        self.clock = clock
        # What this process accepted, inserted already claimed: published without a claim.
        self.handoff = HandOff(
            lease_ms=int(settings.relay_claim_lease_seconds * 1000), wake=self.wake
        )
        self.sent = SentEntries(
            store,
            interval=settings.relay_settle_interval_seconds,
            max_pending=settings.relay_batch_size,
        )
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._oldest_pending_ms: int | None = None
        self._gauges_at_ms = 0
        self._handed_last = False

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        """Called after an accepted submission: relay at once instead of at the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="submission-outbox-relay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self._mark_sent_quietly()  # else they would be published again after the lease

    async def _idle(self) -> None:
        """Wait for a wake-up or the poll interval, marking confirmed entries when they are
        due meanwhile (a pass is not worth its claim round trips just for that)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.relay_poll_interval_seconds
        while (left := deadline - loop.time()) > 0:
            due = self.sent.seconds_until_due()
            woken = await self._wait_for_wake(left if due is None else min(left, due))
            await self._mark_due()
            if woken:
                return

    async def _wait_for_wake(self, seconds: float) -> bool:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        woken = self._wake.is_set()
        self._wake.clear()
        return woken

    async def _mark_due(self, everything: bool = False) -> None:
        if everything or self.sent.seconds_until_due() == 0:
            await self.sent.mark(now_ms=self.clock())

    async def _run(self) -> None:
        log.info("outbox relay started", extra={"action": "relay_start"})
        while True:
            try:
                publisher = (await self.bus.get()).publisher
                published = await self.relay_once(publisher)
                if published < self.settings.relay_batch_size and not self.handoff:
                    await self._idle()
            except asyncio.CancelledError:
                raise
            except BrokerUnavailable as exc:
                log.warning(
                    "broker unavailable; relay waits",
                    extra={"action": "relay_broker_down", "error": str(exc)},
                )
                await self._refresh_gauges_quietly()  # the backlog grows: keep showing it
                await asyncio.sleep(self.settings.broker_retry_seconds)
            except Exception:
                log.exception("relay pass failed", extra={"action": "relay_error"})
                await asyncio.sleep(self.settings.relay_poll_interval_seconds)

    async def run_once(self, publisher: Publisher) -> int:
        """One pass that marks everything it published sent; returns the batch size."""
        return await self.relay_once(publisher, mark_all=True)

    async def relay_once(self, publisher: Publisher, *, mark_all: bool = False) -> int:
        """One pass: what this process handed over (already claimed) if anything, else claim
        a batch; publish it, queue the confirmed entries to be marked sent (and mark them
        when due, or all with ``mark_all``), release the refused ones with a backoff, refresh
        the outbox gauges (at most once a second while hand-offs keep coming). Returns the
        batch size.
        """
        self._wake.clear()
        if self._handed_last and len(self.handoff) < self.settings.relay_jobs_per_message:
            # Busy: let the next message fill a little (a pass with no claim is quick, and a
            # message per job or two costs the broker and the scheduler more than it saves).
            await asyncio.sleep(self.settings.relay_handoff_linger_seconds)
        now_ms = self.clock()
        handed = self.handoff.take(self.settings.relay_batch_size, now_ms)
        self._handed_last = bool(handed)
        if handed:
            await self._publish(publisher, handed, self.handoff.token)
            await self._mark_due(mark_all)
            if now_ms - self._gauges_at_ms >= 1000:
                await self.refresh_gauges()
            return len(handed)
        token = uuid.uuid4().hex
        now_ms = self.clock()
        claimed = await self.store.claim(
            token=token,
            now_ms=now_ms,
            lease_ms=int(self.settings.relay_claim_lease_seconds * 1000),
            limit=self.settings.relay_batch_size,
        )
        if claimed:
            claimed = await publishable(
                claimed, token=token, batches=self.batches, settings=self.settings, now_ms=now_ms
            )
        if claimed:
            await self._publish(publisher, claimed, token)
        await self._mark_due(mark_all)
        await self.refresh_gauges()
        return len(claimed)

    async def _publish(self, publisher: Publisher, claimed: Sequence[Document], token: str) -> None:
        """Publish the claimed entries packed into ``JobsSubmitted`` messages; an entry counts
        as sent when the broker confirmed its message."""
        jobs = [job_submitted(doc) for doc in claimed]
        groups = pack(
            [len(job.to_json()) for job in jobs],
            max_items=self.settings.relay_jobs_per_message,
            max_bytes=self.settings.relay_message_max_bytes,
        )
        items = [
            Outgoing(
                SUBMITTED,
                amqp_message(
                    JobsSubmitted(jobs=jobs[g.start : g.stop], trace_id=jobs[g.start].trace_id)
                ),
            )
            for g in groups
        ]
        published: list[BaseException | None]
        try:
            async with asyncio.timeout(self.settings.relay_publish_timeout_seconds):
                published = await publisher.publish_many(items)
        except TimeoutError as exc:
            published = [exc] * len(items)
        outcomes = [outcome for g, outcome in zip(groups, published, strict=True) for _ in g]
        now_ms = self.clock()
        sent = [doc for doc, outcome in zip(claimed, outcomes, strict=True) if outcome is None]
        for doc in sent:
            metrics.RELAY_LAG.observe(max(0, now_ms - int(doc["createdAtMs"])) / 1000)
        self.sent.add(sent, token=token)
        await asyncio.gather(
            *(
                self._settle_failed(doc, outcome, token=token, now_ms=now_ms)
                for doc, outcome in zip(claimed, outcomes, strict=True)
                if outcome is not None
            )
        )

    async def _settle_failed(
        self, doc: Document, outcome: BaseException, *, token: str, now_ms: int
    ) -> None:
        job_id = doc["_id"]
        metrics.RELAY_FAILED.inc()
        attempts = int(_outbox(doc).get("attempts", 0)) + 1
        delay = retry_delay_ms(
            attempts,
            base_seconds=self.settings.relay_retry_base_seconds,
            max_seconds=self.settings.relay_retry_max_seconds,
        )
        await self.store.release(
            job_id, token=token, next_attempt_ms=now_ms + delay, error=repr(outcome)
        )
        log.warning(
            "publish failed; retrying later",
            extra={
                "action": "relay_publish_failed",
                "job_id": job_id,
                "attempt": attempts,
                "retry_in_ms": delay,
                "error": repr(outcome),
            },
        )

    async def refresh_gauges(self) -> None:
        """Set the outbox gauges from one bounded, index-covered query (no count, no scan).

        ``outbox_pending`` is exact below ``relay_pending_count_limit`` and a lower bound at it;
        ``outbox_oldest_pending_seconds`` is computed when scraped, from the oldest pending
        entry seen here, so it keeps growing if the relay stops making progress.
        """
        self._gauges_at_ms = self.clock()
        backlog = await self.store.pending_backlog(limit=self.settings.relay_pending_count_limit)
        self._oldest_pending_ms = backlog.oldest_created_ms
        metrics.OUTBOX_PENDING.set(backlog.count)
        metrics.OUTBOX_OLDEST_PENDING.set_function(self.oldest_pending_seconds)

    def oldest_pending_seconds(self) -> float:
        """Age of the oldest pending entry the last refresh saw, now (0 when there was none)."""
        if self._oldest_pending_ms is None:
            return 0.0
        return max(0, self.clock() - self._oldest_pending_ms) / 1000

    async def _mark_sent_quietly(self) -> None:
        try:
            await self.sent.mark(now_ms=self.clock())
        except Exception as exc:
            log.warning(
                "confirmed entries not marked sent; they are published again after the lease",
                extra={"action": "relay_mark_failed", "error": repr(exc)},
            )

    async def _refresh_gauges_quietly(self) -> None:
        try:
            await self.refresh_gauges()
        except Exception as exc:
            log.warning(
                "outbox gauges not refreshed",
                extra={"action": "relay_gauges_failed", "error": repr(exc)},
            )


def _outbox(doc: Document) -> dict[str, Any]:
    outbox = doc.get("outbox")
    return outbox if isinstance(outbox, dict) else {}
