"""A scheduler that starts (fresh, after a crash, or as another replica) reads its queues in
any order. It never declares an attempt lost while the store records it as its worker's, and
only a person's cancel request ends a job cancelled (issue 19, docs/scheduler.md "Restarts").

Each test arranges the message order that used to kill a healthy job, deterministically: a
consumer is stopped while the messages it would read pile up, or a competing transaction
commits between two statements of the heartbeat's."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta
from typing import Any, Literal

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    ActiveAttempt,
    CancelAttempt,
    ErrorKind,
    JobError,
    JobRunning,
    WorkerHeartbeat,
    utcnow,
)
from jobs_common.jobstore import jobs
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.heartbeats import apply_heartbeats
from jobs_scheduler.app.running import apply_running
from jobs_scheduler.service import Runtime, job_defaults
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import (
    control_queue,
    job_result,
    job_row,
    next_dispatch,
    submitted,
    timeline_reasons,
    wait_status,
)
from .test_scheduler_leases import attempt_statuses, not_reading

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

LEASE = 1


@pytest.fixture
def scheduler_settings(scheduler_settings: Settings) -> Settings:
    return scheduler_settings.model_copy(
        update={"lease_seconds": LEASE, "tick_interval_seconds": 0.1}
    )


def listing(
    worker_id: str, job_id: uuid.UUID, attempt: int, *, started_at: datetime, sent_at: datetime
) -> WorkerHeartbeat:
    """A heartbeat of ``worker_id`` listing one attempt, as a worker sends it."""
    return WorkerHeartbeat(
        worker_id=worker_id,
        hostname="host-a",
        pid=42,
        version="1.0",
        queues=[topology.READY_MEDIUM],
        concurrency=10,
        active=[ActiveAttempt(job_id=job_id, attempt=attempt, started_at=started_at)],
        started_at=started_at,
        sent_at=sent_at,
    )


async def dispatched(bus: RabbitBus) -> uuid.UUID:
    """A job whose attempt 1 is queued and whose ready message a worker took."""
    message = submitted(max_attempts=3)
    await bus.publisher.publish(topology.SUBMITTED, message)
    dispatch = await next_dispatch(bus)
    assert (dispatch.job_id, dispatch.attempt) == (message.job_id, 1)
    return message.job_id


async def no_cancel_for(control: Any, job_id: uuid.UUID) -> list[CancelAttempt]:
    """Every CancelAttempt broadcast for ``job_id`` so far."""
    found = []
    while (message := await control.get(no_ack=True, fail=False)) is not None:
        cancel = CancelAttempt.model_validate_json(message.body)
        if cancel.job_id == job_id:
            found.append(cancel)
    return found


async def read_past(scheduler: Runtime, moment: datetime) -> None:
    """Wait until the scheduler has read the heartbeat and result queues past ``moment``:
    from then on the reaper judges leases against a horizon later than it."""

    async def past() -> bool:
        horizon = scheduler.consumers.progress.horizons.get(topology.HEARTBEAT)
        results = scheduler.consumers.progress.horizons.get(topology.RESULTS)
        return horizon is not None and results is not None and min(horizon, results) > moment

    await eventually(past, timeout=10, what=f"horizons past {moment}")


async def test_heartbeats_read_before_the_running_message_start_the_attempt(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    """A restarted scheduler reads ``jobs.heartbeat`` before ``jobs.running``: the worker's
    heartbeats list an attempt the store still has queued. They start it, so when the late
    ``JobRunning`` (with its old start time) arrives, no lease is judged expired."""
    control = await control_queue(bus)
    job_id = await dispatched(bus)
    started_at = utcnow()
    async with not_reading(scheduler, topology.RUNNING):
        await bus.publisher.publish(
            topology.RUNNING,
            JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=started_at),
        )
        for _ in range(int(4 * LEASE / 0.2)):  # heartbeats for four leases, running unread
            now = utcnow()
            await bus.publisher.publish(
                topology.HEARTBEAT,
                listing("w-alive", job_id, 1, started_at=started_at, sent_at=now),
            )
            await asyncio.sleep(0.2)
        row = await wait_status(db, job_id, "running")  # applied when the machine allows
        assert (row.worker_id, row.started_at) == ("w-alive", started_at)
    # The late JobRunning is stale; its start is long past a lease ago, which the reaper
    # would judge expired had the heartbeats not started and renewed the attempt.
    last = utcnow()
    await bus.publisher.publish(
        topology.HEARTBEAT, listing("w-alive", job_id, 1, started_at=started_at, sent_at=last)
    )
    await read_past(scheduler, started_at + timedelta(seconds=LEASE + 0.5))
    assert (await job_row(db, job_id)).status == "running"
    await bus.publisher.publish(topology.RESULTS, job_result(job_id, 1, worker_id="w-alive"))
    row = await wait_status(db, job_id, "succeeded")
    assert (row.attempt, row.lost_count) == (1, 0)
    assert await attempt_statuses(db, job_id) == ["succeeded"]
    assert "started on w-alive (listed by its heartbeat)" in await timeline_reasons(db, job_id)
    assert await no_cancel_for(control, job_id) == []


class StartBetweenStatements:
    """A connection that, right after the heartbeat's lease renewal, lets another transaction
    try to commit a start of the same attempt: the race of two consumers of a restarted
    scheduler (heartbeats and running messages), arranged instead of hoped for."""

    def __init__(self, connection: AsyncConnection, competitor: Any) -> None:
        self.connection = connection
        self.competitor = competitor
        self.task: asyncio.Task[list[bool]] | None = None
        self.waited = False

    async def execute(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        result = await self.connection.execute(statement, *args, **kwargs)
        if self.task is None and "lease_expires_at=greatest" in str(statement).replace(" ", ""):
            self.task = asyncio.create_task(self.competitor())
            await asyncio.sleep(0.5)  # time enough to commit, were the row not locked
            self.waited = not self.task.done()
        return result


async def test_a_start_racing_the_renewal_waits_for_the_heartbeat_and_no_lease_is_lost(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """The heartbeat's renewal finds the attempt queued; the ``JobRunning`` of the same worker
    tries to commit before the heartbeat's next statement reads the row. It once did, and the
    heartbeat took the moved row for a lost lease and told a healthy worker to cancel its
    job; now the heartbeat locks its listed jobs first, the start waits, the heartbeat starts
    the attempt itself, and the start arrives stale. No "lease lost" either way."""
    job_id = await dispatched(bus)
    defaults = job_defaults(scheduler_settings)
    started_at = utcnow()
    running = JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=started_at)

    async def running_commits() -> list[bool]:
        async with db.begin() as other:
            return await apply_running(other, Changes(), [running], defaults)

    beat = listing("w-alive", job_id, 1, started_at=started_at, sent_at=utcnow())
    changes = Changes()
    async with db.begin() as connection:
        racing = StartBetweenStatements(connection, running_commits)
        await apply_heartbeats(racing, changes, [beat], defaults)  # type: ignore[arg-type]
    assert racing.task is not None and racing.waited
    assert await asyncio.wait_for(racing.task, 10) == [False]  # the heartbeat started it
    assert changes.messages == []  # no CancelAttempt queued for the outbox
    row = await job_row(db, job_id)
    assert (row.status, row.worker_id, row.attempt) == ("running", "w-alive", 1)
    assert row.lease_expires_at >= beat.sent_at + timedelta(seconds=LEASE) - timedelta(
        milliseconds=1
    )


async def test_a_late_running_message_and_an_old_heartbeat_change_nothing(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """After the heartbeat started the attempt: its own ``JobRunning`` (redelivered to the
    restarted scheduler, or late) is stale, and a heartbeat sent before the crash and read
    again renews nothing backwards and cancels nothing."""
    job_id = await dispatched(bus)
    defaults = job_defaults(scheduler_settings)
    started_at = utcnow() - timedelta(seconds=3)
    fresh = listing("w-alive", job_id, 1, started_at=started_at, sent_at=utcnow())
    old = listing("w-alive", job_id, 1, started_at=started_at, sent_at=started_at)
    late = JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=started_at)
    changes = Changes()
    async with db.begin() as connection:
        await apply_heartbeats(connection, changes, [fresh], defaults)
    lease = (await job_row(db, job_id)).lease_expires_at
    async with db.begin() as connection:
        assert await apply_running(connection, changes, [late], defaults) == [False]
        await apply_heartbeats(connection, changes, [old], defaults)
    row = await job_row(db, job_id)
    assert (row.status, row.worker_id, row.lease_expires_at) == ("running", "w-alive", lease)
    assert changes.messages == []


@pytest.mark.parametrize("outcome", ["succeeded", "failed"])
async def test_a_result_read_before_running_and_heartbeats_ends_the_attempt_once(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, outcome: Literal["succeeded", "failed"]
) -> None:
    """Results before running: the result ends the queued attempt; the running message and a
    heartbeat that still listed the attempt (sent before the result), read afterwards, move
    nothing and tell the worker nothing: it holds no attempt to stop."""
    control = await control_queue(bus)
    job_id = await dispatched(bus)
    started_at = utcnow()
    async with not_reading(scheduler, topology.RUNNING, topology.HEARTBEAT):
        await bus.publisher.publish(
            topology.RUNNING,
            JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=started_at),
        )
        await bus.publisher.publish(
            topology.HEARTBEAT,
            listing("w-alive", job_id, 1, started_at=started_at, sent_at=utcnow()),
        )
        await bus.publisher.publish(
            topology.RESULTS,
            job_result(job_id, 1, outcome, worker_id="w-alive", started_at=started_at),
        )

        async def first_attempt_ended() -> bool:
            return (await attempt_statuses(db, job_id))[0] == outcome

        await eventually(first_attempt_ended, timeout=10, what=f"attempt 1 {outcome}")
    await read_past(scheduler, utcnow())
    row = await job_row(db, job_id)
    if outcome == "succeeded":
        assert (row.status, row.attempt) == ("succeeded", 1)
    assert (await attempt_statuses(db, job_id))[0] == outcome
    assert await no_cancel_for(control, job_id) == []


async def test_an_attempt_the_platform_stopped_is_lost_and_run_again_not_dead(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    """A worker told "lease lost" stops the attempt and reports it ``cancelled`` (a permanent
    ``Cancelled`` error). No one asked to cancel the job: it is retried as a lost attempt."""
    job_id = await dispatched(bus)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=utcnow()),
    )
    await wait_status(db, job_id, "running")
    stopped = JobError(kind=ErrorKind.PERMANENT, error_class="Cancelled", message="lease lost")
    await bus.publisher.publish(
        topology.RESULTS, job_result(job_id, 1, "cancelled", worker_id="w-alive", error=stopped)
    )
    retry = await next_dispatch(bus)
    assert (retry.job_id, retry.attempt) == (job_id, 2)
    row = await job_row(db, job_id)
    assert row.status == "queued"
    assert row.last_error_class == "AttemptStopped"
    assert await attempt_statuses(db, job_id) == ["lost", "queued"]
    assert not any("permanent" in reason for reason in await timeline_reasons(db, job_id))


async def test_a_heartbeat_vouches_for_its_send_time_never_later_than_it_was_applied(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    """The lease runs from the heartbeat's own send time (``sql.vouched``): one read late
    renews from when it was sent; one from a worker whose clock runs ahead renews from when it
    is applied, never from a time to come. (One transaction, rolled back: the running
    scheduler's reaper never sees these short leases.)"""
    job_id = await dispatched(bus)
    defaults = job_defaults(scheduler_settings)
    started_at = utcnow() - timedelta(seconds=10)
    running = JobRunning(job_id=job_id, attempt=1, worker_id="w-alive", started_at=started_at)
    lease = timedelta(seconds=LEASE)
    async with db.connect() as connection, connection.begin() as transaction:
        assert await apply_running(connection, Changes(), [running], defaults) == [True]
        applied_at = (await connection.execute(select(func.now()))).scalar_one()

        async def beat(sent_at: datetime) -> datetime:
            beats = [listing("w-alive", job_id, 1, started_at=started_at, sent_at=sent_at)]
            await apply_heartbeats(connection, Changes(), beats, defaults)
            query = select(jobs.c.lease_expires_at).where(jobs.c.id == job_id)
            renewed: datetime = (await connection.execute(query)).scalar_one()
            return renewed

        read_late = applied_at - timedelta(seconds=3)
        assert await beat(read_late) == read_late + lease  # its own send time counts
        assert await beat(applied_at + timedelta(seconds=30)) == applied_at + lease  # not 30 s on
        await transaction.rollback()
