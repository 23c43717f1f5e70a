"""Control message handling (CancelAttempt remembered and applied; anything else ignored) and
the heartbeat's content."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from itertools import pairwise
from typing import cast

import orjson
import pytest

from jobs_common.contracts import (
    ActiveAttempt,
    CancelAttempt,
    JobDispatch,
    JobLogLine,
    WorkerHeartbeat,
    utcnow,
)
from jobs_common.rabbit import Publisher
from jobs_worker.api.control import ControlConsumer
from jobs_worker.app.active_jobs import ActiveJob, ActiveJobs, Phase
from jobs_worker.app.heartbeat import (
    HeartbeatLoop,
    WorkerIdentity,
    build_heartbeat,
    package_version,
)
from jobs_worker.domain.cancellations import CancelledSet

pytestmark = pytest.mark.unit


def dispatch(attempt: int = 1) -> JobDispatch:
    return JobDispatch(
        job_id=uuid.uuid4(),
        attempt=attempt,
        job_type="simulate",
        priority=2,
        payload={},
        timeout_seconds=10,
        dispatched_at=datetime.now(UTC),
    )


async def test_cancel_attempt_is_remembered_and_cancels_the_running_handler() -> None:
    active, cancelled = ActiveJobs(), CancelledSet()
    consumer = ControlConsumer(worker_id="w", cancelled=cancelled, active=active)
    delivery = asyncio.create_task(asyncio.Event().wait())
    handler = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(dispatch=dispatch(), queue="q", task=delivery, phase=Phase.RUNNING)
    job.handler = handler
    active.add(job)

    consumer.handle(CancelAttempt(job_id=job.dispatch.job_id, reason="cancelled").to_json())
    assert cancelled.reason_for(job.dispatch.job_id, 5) == "cancelled"
    assert job.cancel_reason == "cancelled"
    with pytest.raises(asyncio.CancelledError):
        await handler
    delivery.cancel()
    await asyncio.gather(delivery, return_exceptions=True)


async def test_a_cancel_meant_for_another_worker_changes_nothing_here() -> None:
    active, cancelled = ActiveJobs(), CancelledSet()
    consumer = ControlConsumer(worker_id="w-new", cancelled=cancelled, active=active)
    delivery = asyncio.create_task(asyncio.Event().wait())
    handler = asyncio.create_task(asyncio.Event().wait())
    job = ActiveJob(dispatch=dispatch(), queue="q", task=delivery, phase=Phase.RUNNING)
    job.handler = handler
    active.add(job)

    lost_elsewhere = CancelAttempt(
        job_id=job.dispatch.job_id, attempt=1, reason="lease lost", worker_id="w-old"
    )
    consumer.handle(lost_elsewhere.to_json())
    assert len(cancelled) == 0
    assert job.cancel_reason is None
    assert not handler.done()
    consumer.handle(lost_elsewhere.model_copy(update={"worker_id": "w-new"}).to_json())
    assert job.cancel_reason == "lease lost"
    for task in (handler, delivery):
        task.cancel()
    await asyncio.gather(handler, delivery, return_exceptions=True)


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"type": "control.cancel", "job_id": "not-a-uuid", "reason": "x"}',
        b'{"type": "control.pause"}',
    ],
)
def test_other_or_broken_control_messages_change_nothing(body: bytes) -> None:
    cancelled = CancelledSet()
    consumer = ControlConsumer(worker_id="w", cancelled=cancelled, active=ActiveJobs())
    consumer.handle(body)  # no exception
    assert len(cancelled) == 0


def test_a_message_of_another_type_is_not_a_cancel() -> None:
    cancelled = CancelledSet()
    consumer = ControlConsumer(worker_id="w", cancelled=cancelled, active=ActiveJobs())
    line = JobLogLine(
        job_id=uuid.uuid4(),
        attempt=1,
        worker_id="w",
        level="info",
        message="m",
        at=datetime.now(UTC),
    )
    consumer.handle(line.to_json())
    assert orjson.loads(line.to_json())["type"] == "job.log"
    assert len(cancelled) == 0


async def test_heartbeat_lists_leased_attempts_and_the_last_lists_none() -> None:
    active = ActiveJobs()
    task = asyncio.create_task(asyncio.Event().wait())
    leased = ActiveJob(
        dispatch=dispatch(2),
        queue="q",
        task=task,
        phase=Phase.RUNNING,
        running_confirmed=True,
        started_at=utcnow(),
    )
    starting = ActiveJob(dispatch=dispatch(), queue="q", task=task)
    active.add(leased)
    active.add(starting)
    identity = WorkerIdentity.of_this_process(worker_id="w-1", queues=["a", "b"], concurrency=7)
    assert identity.version == package_version() != ""

    beat = build_heartbeat(identity, active, stopping=False)
    assert beat.active == [
        ActiveAttempt(job_id=leased.dispatch.job_id, attempt=2, started_at=leased.started_at)
    ]
    assert (beat.worker_id, beat.queues, beat.concurrency, beat.stopping) == (
        "w-1",
        ["a", "b"],
        7,
        False,
    )
    assert build_heartbeat(identity, active, stopping=True).stopping is True
    last = build_heartbeat(identity, active, stopping=False, final=True)
    assert (last.active, last.stopping) == ([], True)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class SlowConfirms:
    """A publisher whose every confirm takes ``delay`` seconds (a broker busy with a flood);
    it keeps the heartbeats it was given."""

    def __init__(self, delay: float, wanted: int) -> None:
        self.delay = delay
        self.beats: list[WorkerHeartbeat] = []
        self.wanted = wanted
        self.enough = asyncio.Event()

    async def publish(self, _queue: str, message: WorkerHeartbeat) -> None:
        self.beats.append(message)
        if len(self.beats) >= self.wanted:
            self.enough.set()
        await asyncio.sleep(self.delay)


async def test_heartbeats_keep_their_interval_when_the_broker_confirms_slowly() -> None:
    """The lease runs from each heartbeat's send time: a heartbeat sent an interval after the
    previous confirm came back (not after the previous send) stretched every gap by the
    confirm's time, past a lease of 1.5 intervals under a loaded broker."""
    interval, confirm = 0.25, 0.2
    publisher = SlowConfirms(confirm, wanted=7)
    identity = WorkerIdentity.of_this_process(worker_id="w", queues=["q"], concurrency=1)
    loop = HeartbeatLoop(
        publisher=cast(Publisher, publisher),
        identity=identity,
        active=ActiveJobs(),
        interval=interval,
        stopping=lambda: False,
    )
    await loop.start()
    await asyncio.wait_for(publisher.enough.wait(), 10)
    await loop.stop()
    sent = [beat.sent_at for beat in publisher.beats[:7]]
    gaps = sorted((later - earlier).total_seconds() for earlier, later in pairwise(sent))
    median = gaps[len(gaps) // 2]
    assert median < interval + confirm * 0.75, gaps  # interval + confirm when they add up
