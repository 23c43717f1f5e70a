"""Issue 3 behaviour of the scheduler against real PostgreSQL and RabbitMQ."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import (
    CancelRequested,
    ErrorKind,
    JobError,
    JobLogLine,
    JobLogLines,
    JobResults,
    JobRunning,
    JobSubmitted,
    RetryPolicySpec,
    RetryRequested,
    utcnow,
)
from jobs_common.jobstore import (
    batches,
    job_attempts,
    job_events,
    job_logs,
    jobs,
    retry_policies,
    schedule_fires,
    schedules,
    workers,
)
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.running import apply_running
from jobs_scheduler.service import Runtime, job_defaults
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import (
    control_queue,
    dead_letter_of,
    heartbeat,
    job_result,
    job_row,
    next_cancel,
    next_dispatch,
    submitted,
    timeline_reasons,
    wait_status,
)

pytestmark = pytest.mark.integration


async def test_delayed_job_waits_in_scheduled_and_is_dispatched_when_due(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    run_at = utcnow() + timedelta(seconds=1.5)
    message = submitted(run_at=run_at)
    await bus.publisher.publish(topology.SUBMITTED, message)
    row = await wait_status(db, message.job_id, "scheduled")
    assert (row.attempt, row.run_at) == (0, run_at)
    dispatch = await next_dispatch(bus)
    assert dispatch.attempt == 1
    assert dispatch.dispatched_at >= run_at, "dispatched before its time"


async def test_retry_policy_inline_and_named_are_recorded(bus: RabbitBus, db: AsyncEngine) -> None:
    async with db.begin() as connection:
        await connection.execute(
            insert(retry_policies).values(
                name="slow-linear",
                strategy="linear",
                base_delay_ms=5000,
                multiplier=1,
                max_delay_ms=60000,
                jitter=False,
                max_attempts=7,
                created_by="admin@test.com",
            )
        )
    inline = submitted(retry_policy=RetryPolicySpec(strategy="fixed", base_delay_ms=100))
    named = submitted(retry_policy_name="slow-linear", max_attempts=None)
    for message in (inline, named):
        await bus.publisher.publish(topology.SUBMITTED, message)
    first = await wait_status(db, inline.job_id, "queued")
    second = await wait_status(db, named.job_id, "queued")
    assert first.retry_policy["strategy"] == "fixed"
    assert first.retry_policy["base_delay_ms"] == 100
    assert second.retry_policy["strategy"] == "linear"
    assert second.max_attempts == 7

    unknown = submitted(retry_policy_name="no-such-policy")
    await bus.publisher.publish(topology.SUBMITTED, unknown)
    third = await wait_status(db, unknown.job_id, "queued")
    assert third.retry_policy["strategy"] == "exponential"
    first_reason = (await timeline_reasons(db, unknown.job_id))[0]
    assert first_reason == "submitted; retry policy 'no-such-policy' unknown, defaults used"


async def test_heartbeats_renew_leases_and_register_the_worker(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w-1", started_at=utcnow()),
    )
    before = (await wait_status(db, message.job_id, "running")).lease_expires_at
    await bus.publisher.publish(topology.HEARTBEAT, heartbeat("w-1", (message.job_id, 1)))

    async def renewed() -> bool:
        return (await job_row(db, message.job_id)).lease_expires_at > before

    await eventually(renewed, what="lease renewal")
    async with db.connect() as connection:
        worker = (await connection.execute(select(workers))).one()
    assert (worker.id, worker.hostname, worker.active_jobs) == ("w-1", "host-a", 1)


async def test_a_worker_holding_a_lost_attempt_is_told_to_stop(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    control = await control_queue(bus)
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w-1", started_at=utcnow()),
    )
    await wait_status(db, message.job_id, "running")
    # Another worker claims to run attempt 1: the store gives it to w-1 only.
    await bus.publisher.publish(topology.HEARTBEAT, heartbeat("w-2", (message.job_id, 1)))
    cancel = await next_cancel(control)
    assert (cancel.job_id, cancel.attempt, cancel.reason) == (message.job_id, 1, "lease lost")
    assert cancel.worker_id == "w-2"  # only the worker that lost it, not w-1


async def test_expired_leases_are_retried_then_quarantined_as_poison(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime
) -> None:
    message = submitted(max_attempts=10)
    await bus.publisher.publish(topology.SUBMITTED, message)
    for attempt in (1, 2, 3):
        dispatch = await next_dispatch(bus)
        assert dispatch.attempt == attempt
        await bus.publisher.publish(
            topology.RUNNING,
            JobRunning(job_id=message.job_id, attempt=attempt, worker_id="w", started_at=utcnow()),
        )
        await wait_status(db, message.job_id, "running")
        # The worker dies: no heartbeat, no result. Expire the lease now.
        async with db.begin() as connection:
            await connection.execute(
                update(jobs)
                .where(jobs.c.id == message.job_id)
                .values(lease_expires_at=utcnow() - timedelta(seconds=1))
            )
    row = await wait_status(db, message.job_id, "dead")
    assert row.lost_count == 3
    letter = await dead_letter_of(db, message.job_id)
    assert letter.reason == "poison"


async def test_cancel_a_queued_job_at_once_and_broadcast_it(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    control = await control_queue(bus)
    message = submitted(run_at=utcnow() + timedelta(hours=1))
    await bus.publisher.publish(topology.SUBMITTED, message)
    await wait_status(db, message.job_id, "scheduled")
    await bus.publisher.publish(
        topology.CANCEL,
        CancelRequested(job_id=message.job_id, requested_by="user@test.com", requested_at=utcnow()),
    )
    row = await wait_status(db, message.job_id, "cancelled")
    assert row.cancel_requested_by == "user@test.com"
    cancel = await next_cancel(control)
    assert (cancel.job_id, cancel.attempt) == (message.job_id, None)


async def running_then_cancel_asked(
    bus: RabbitBus, db: AsyncEngine
) -> tuple[JobSubmitted, datetime]:
    """A job running on worker "w" (since the returned time) whose cancellation was asked."""
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    started = utcnow()
    await bus.publisher.publish(
        topology.RUNNING,
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w", started_at=started),
    )
    await wait_status(db, message.job_id, "running")
    await bus.publisher.publish(
        topology.CANCEL,
        CancelRequested(
            job_id=message.job_id, requested_by="admin@test.com", requested_at=utcnow()
        ),
    )
    return message, started


async def test_cancel_a_running_job_through_its_worker(bus: RabbitBus, db: AsyncEngine) -> None:
    control = await control_queue(bus)
    message, started = await running_then_cancel_asked(bus, db)
    cancel = await next_cancel(control)
    assert (cancel.job_id, cancel.attempt) == (message.job_id, 1)
    assert (await job_row(db, message.job_id)).status == "running"
    await bus.publisher.publish(
        topology.RESULTS,
        job_result(message.job_id, 1, "cancelled", worker_id="w", started_at=started),
    )
    await wait_status(db, message.job_id, "cancelled")


async def test_an_attempt_that_fails_after_a_cancel_was_asked_ends_the_job_cancelled(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """The worker's failure overtook the cancel (it failed before the CancelAttempt reached
    it): the job still ends cancelled, its timeline saying the attempt failed first."""
    message, started = await running_then_cancel_asked(bus, db)
    await eventually(
        lambda: _cancel_requested(db, message.job_id), what="the cancel request recorded"
    )
    await bus.publisher.publish(
        topology.RESULTS,
        job_result(message.job_id, 1, "failed", worker_id="w", started_at=started),
    )
    await wait_status(db, message.job_id, "cancelled")
    async with db.connect() as connection:
        moves = [
            (row.from_status, row.to_status)
            for row in await connection.execute(
                select(job_events)
                .where(job_events.c.job_id == message.job_id)
                .order_by(job_events.c.id)
            )
        ]
    assert moves[-2:] == [("running", "failed"), ("failed", "cancelled")]


async def _cancel_requested(db: AsyncEngine, job_id: uuid.UUID) -> bool | None:
    return (await job_row(db, job_id)).cancel_requested_at is not None or None


async def test_dependencies_block_until_parents_succeed_and_fail_with_them(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    parent_ok, parent_bad = submitted(), submitted(max_attempts=1)
    child = submitted(depends_on=[parent_ok.job_id])
    orphan = submitted(depends_on=[parent_ok.job_id, parent_bad.job_id])
    # The children arrive before their parents: they wait.
    for message in (child, orphan):
        await bus.publisher.publish(topology.SUBMITTED, message)
    await wait_status(db, child.job_id, "blocked")
    for message in (parent_ok, parent_bad):
        await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await next_dispatch(bus)
    for parent, outcome in ((parent_ok, "succeeded"), (parent_bad, "failed")):
        await bus.publisher.publish(
            topology.RESULTS, job_result(parent.job_id, 1, outcome, worker_id="w")
        )
    dispatch = await next_dispatch(bus)
    assert (dispatch.job_id, dispatch.attempt) == (child.job_id, 1)
    dead = await wait_status(db, orphan.job_id, "dead")
    assert dead.last_error_class == "DependencyFailed"
    reason = (await dead_letter_of(db, orphan.job_id)).reason
    assert reason == "dependency_failed"


async def test_batch_members_create_one_batch_row(bus: RabbitBus, db: AsyncEngine) -> None:
    batch_id = uuid.uuid4()
    members = [submitted(batch_id=batch_id, batch_size=3) for _ in range(3)]
    await asyncio.gather(*(bus.publisher.publish(topology.SUBMITTED, m) for m in members))
    for member in members:
        assert (await wait_status(db, member.job_id, "queued")).batch_id == batch_id
    async with db.connect() as connection:
        row = (await connection.execute(select(batches))).one()
    assert (row.id, row.total) == (batch_id, 3)


async def test_reconciler_redispatches_a_ready_message_the_broker_lost(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)  # taken and thrown away: the broker "lost" it

    async def confirmed() -> bool:
        return (await job_row(db, message.job_id)).queued_at is not None

    await eventually(confirmed, what="queued_at stamped by the relay")
    async with db.begin() as connection:
        await connection.execute(
            update(jobs)
            .where(jobs.c.id == message.job_id)
            .values(queued_at=utcnow() - timedelta(minutes=10))
        )
    again = await next_dispatch(bus, timeout=20)
    assert (again.job_id, again.attempt) == (message.job_id, 2)
    row = await job_row(db, message.job_id)
    assert (row.status, row.attempt_limit) == ("queued", message.max_attempts + 1)


async def test_log_lines_are_stored_once(bus: RabbitBus, db: AsyncEngine) -> None:
    """Lines come several to a message; a redelivered line is stored once; a single line in
    the older one-line format is still read."""
    job_id = uuid.uuid4()

    def line(text: str) -> JobLogLine:
        return JobLogLine(
            job_id=job_id, attempt=1, worker_id="w", level="info", message=text, at=utcnow()
        )

    hello, world = line("hello"), line("world")
    batch = JobLogLines(worker_id="w", lines=[hello, world])
    await bus.publisher.publish(topology.LOGS, batch)
    await bus.publisher.publish(topology.LOGS, batch)
    await bus.publisher.publish(topology.LOGS, JobLogLines(worker_id="w", lines=[world]))
    await bus.publisher.publish(topology.LOGS, line("end"))  # the one-line format

    async def all_three() -> list[object] | None:
        async with db.connect() as connection:
            found = list((await connection.execute(select(job_logs).order_by(job_logs.c.id))).all())
        return found if len(found) >= 3 else None

    rows = await eventually(all_three, what="three log lines")
    assert [r.message for r in rows] == ["hello", "world", "end"]  # type: ignore[attr-defined]


async def test_log_lines_riding_with_results_are_stored_with_them(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    """A worker's queued lines travel in JobResults.lines: stored in the transaction that
    applies the results, once however often the message comes, even beside a stale result."""
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    lines = [
        JobLogLine(
            job_id=message.job_id,
            attempt=1,
            worker_id="w",
            level="info",
            message=text,
            at=utcnow(),
        )
        for text in ("starting", "done")
    ]
    results = JobResults(results=[job_result(message.job_id, 1, worker_id="w")], lines=lines)
    await bus.publisher.publish(topology.RESULTS, results)
    await bus.publisher.publish(topology.RESULTS, results)  # redelivered: the result is stale
    await wait_status(db, message.job_id, "succeeded")

    async def both() -> list[str] | None:
        async with db.connect() as connection:
            found = (
                await connection.execute(
                    select(job_logs.c.message)
                    .where(job_logs.c.job_id == message.job_id)
                    .order_by(job_logs.c.id)
                )
            ).scalars()
            texts = list(found)
        return texts if len(texts) >= 2 else None

    assert await eventually(both, what="the two lines") == ["starting", "done"]
    await asyncio.sleep(0.3)  # the stale copy has been applied by now: still two
    assert await both() == ["starting", "done"]


async def test_requeue_with_edited_payload_not_before_a_time(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    message = submitted(max_attempts=1)
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    bad_input = JobError(kind=ErrorKind.PERMANENT, error_class="Bad", message="bad input")
    await bus.publisher.publish(
        topology.RESULTS, job_result(message.job_id, 1, "failed", worker_id="w", error=bad_input)
    )
    await wait_status(db, message.job_id, "dead")
    not_before = utcnow() + timedelta(seconds=1)
    await bus.publisher.publish(
        topology.RETRY,
        RetryRequested(
            job_id=message.job_id,
            requested_by="admin@test.com",
            requested_at=utcnow(),
            reason="fixed input",
            payload={"seed": 2},
            not_before=not_before,
        ),
    )
    row = await wait_status(db, message.job_id, "scheduled")
    assert row.payload == {"seed": 2}
    dispatch = await next_dispatch(bus)
    assert dispatch.attempt == 2
    assert dispatch.payload == {"seed": 2}
    assert dispatch.dispatched_at >= not_before
    reasons = await timeline_reasons(db, message.job_id)
    assert any("fixed input by admin@test.com" in r for r in reasons)


async def test_one_batch_with_a_start_a_duplicate_and_a_redelivery_of_one_attempt(
    bus: RabbitBus, db: AsyncEngine, scheduler_settings: Settings
) -> None:
    message = submitted()
    await bus.publisher.publish(topology.SUBMITTED, message)
    await next_dispatch(bus)
    await wait_status(db, message.job_id, "queued")
    now = utcnow()
    batch = [
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w-dead", started_at=now),
        JobRunning(job_id=message.job_id, attempt=1, worker_id="w-other", started_at=now),
        JobRunning(
            job_id=message.job_id, attempt=1, worker_id="w-new", started_at=now, redelivered=True
        ),
    ]
    changes = Changes()
    async with db.begin() as connection:
        outcomes = await apply_running(connection, changes, batch, job_defaults(scheduler_settings))
        await changes.flush(connection)
    # The redelivery is a claim: w-dead's lease is fresh, so w-new waits (test_scheduler_claims).
    assert outcomes == [True, False, False]
    assert changes.moves == [("queued", "running")]
    row = await job_row(db, message.job_id)
    assert (row.status, row.worker_id) == ("running", "w-dead")
    async with db.connect() as connection:
        attempt = (
            await connection.execute(
                select(job_attempts).where(job_attempts.c.job_id == message.job_id)
            )
        ).one()
    assert (attempt.status, attempt.worker_id) == ("running", "w-dead")


@pytest.mark.parametrize(
    ("cron", "timezone"),
    [
        # Six fields (seconds first): the scheduler's own cron rule used to accept it, while
        # the dashboard refused it; one rule now (jobs_common.cron) refuses it everywhere.
        ("0 0 7 * * *", "UTC"),
        ("0 7 * * *", "Mars/Base"),  # a zone this machine's tzdata does not know
    ],
)
async def test_a_schedule_the_scheduler_cannot_read_is_paused_and_the_others_still_fire(
    scheduler: Runtime, db: AsyncEngine, cron: str, timezone: str
) -> None:
    """A schedule row no rule can read (written by hand, or a zone gone from tzdata) is paused
    with a log line; it never fails the tick for the schedules due after it."""
    now = utcnow()
    unreadable, fine = uuid.uuid4(), uuid.uuid4()
    template = {"type": "simulate", "priority": 2, "payload": {}}
    async with db.begin() as connection:
        await connection.execute(
            insert(schedules),
            [
                {
                    "id": unreadable,
                    "name": "unreadable",
                    "cron": cron,
                    "timezone": timezone,
                    "job_template": template,
                    "owner": "user@test.com",
                    "next_fire_at": now - timedelta(minutes=2),
                },
                {
                    "id": fine,
                    "name": "fine",
                    "cron": "0 7 * * *",
                    "timezone": "UTC",
                    "job_template": template,
                    "owner": "user@test.com",
                    "next_fire_at": now - timedelta(minutes=1),
                },
            ],
        )

    async def fired() -> bool:
        async with db.connect() as connection:
            fires = await connection.execute(
                select(schedule_fires.c.schedule_id).where(schedule_fires.c.schedule_id == fine)
            )
            return fires.first() is not None

    await eventually(fired, timeout=10, what="the readable schedule fired")
    async with db.connect() as connection:
        rows = {
            row.id: row
            for row in await connection.execute(
                select(schedules.c.id, schedules.c.paused, schedules.c.last_fire_at)
            )
        }
    assert (rows[unreadable].paused, rows[unreadable].last_fire_at) == (True, None)
    assert rows[fine].paused is False
