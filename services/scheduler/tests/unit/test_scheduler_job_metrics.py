"""What a committed transaction counts: each outcome once, failures by whether they ended the
job, deaths by reason, and the attempt timings (no I/O: real Changes, the real registry)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
from prometheus_client import REGISTRY

from jobs_common.contracts import JobStatus, utcnow
from jobs_scheduler.adapters.job_metrics import record_committed
from jobs_scheduler.adapters.side_rows import Changes

pytestmark = pytest.mark.unit

S = JobStatus


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def moves(changes: Changes, job_type: str, *steps: tuple[S | None, S]) -> uuid.UUID:
    job_id = uuid.uuid4()
    for current, target in steps:
        changes.move(
            job_id, 1, current, target, "test", job_type=job_type, submitted_by="u@example.com"
        )
    return job_id


def dead_letter(changes: Changes, job_id: uuid.UUID, reason: str) -> None:
    job = SimpleNamespace(
        id=job_id, type="email", priority=2, payload={}, submitted_by="u@example.com"
    )
    changes.dead_letter(job, attempt=1, reason=reason, error="boom", error_class="Boom")


def snapshot() -> dict[str, float]:
    return {
        "succeeded": sample("jobs_succeeded_total", type="email"),
        "succeeded_other": sample("jobs_succeeded_total", type="other"),
        "retried": sample("jobs_failed_total", type="email", terminal="false"),
        "ended": sample("jobs_failed_total", type="email", terminal="true"),
        "max_attempts": sample("jobs_dead_total", reason="max_attempts"),
        "ttl_expired": sample("jobs_dead_total", reason="ttl_expired"),
        "queued_running": sample(
            "scheduler_transitions_total", from_status="queued", to_status="running"
        ),
    }


def test_each_outcome_is_counted_once_with_its_labels() -> None:
    before = snapshot()
    changes = Changes()
    moves(changes, "email", (S.QUEUED, S.RUNNING), (S.RUNNING, S.SUCCEEDED))
    moves(changes, "email", (S.QUEUED, S.SUCCEEDED))  # a result that overtook its JobRunning
    moves(changes, "no-such-type", (S.RUNNING, S.SUCCEEDED))
    moves(changes, "email", (S.RUNNING, S.FAILED), (S.FAILED, S.SCHEDULED))  # retried later
    moves(changes, "email", (S.RUNNING, S.FAILED), (S.FAILED, S.QUEUED))  # retried at once
    spent = moves(changes, "email", (S.RUNNING, S.FAILED), (S.FAILED, S.DEAD))
    dead_letter(changes, spent, "max_attempts")
    expired = moves(changes, "email", (S.QUEUED, S.DEAD))  # never ran: dead, not failed
    dead_letter(changes, expired, "ttl_expired")
    moves(changes, "email", (None, S.PENDING), (S.PENDING, S.QUEUED))  # no outcome

    record_committed(changes)

    after = snapshot()
    assert {k: after[k] - before[k] for k in after} == {
        "succeeded": 2,
        "succeeded_other": 1,
        "retried": 2,
        "ended": 1,
        "max_attempts": 1,
        "ttl_expired": 1,
        "queued_running": 1,
    }


def test_attempt_timings_are_observed_by_type_and_priority() -> None:
    def count(name: str, **labels: str) -> float:
        return sample(f"{name}_count", **labels)

    def total(name: str, **labels: str) -> float:
        return sample(f"{name}_sum", **labels)

    wait = {"type": "report_generation", "priority": "high"}
    run = {"type": "report_generation"}
    before = (count("job_queue_wait_seconds", **wait), total("job_queue_wait_seconds", **wait))
    ran_before = (count("job_run_seconds", **run), total("job_run_seconds", **run))
    started = utcnow()
    changes = Changes()
    changes.attempt_started(
        job_type="report_generation",
        priority=3,
        queued_at=started - timedelta(seconds=2),
        started_at=started,
    )
    changes.attempt_started(  # dispatched, not yet confirmed by the broker: no wait known
        job_type="report_generation", priority=3, queued_at=None, started_at=started
    )
    changes.attempt_started(  # a worker clock behind the database's: 0, never negative
        job_type="report_generation",
        priority=3,
        queued_at=started + timedelta(seconds=1),
        started_at=started,
    )
    changes.attempt_ran(
        job_type="report_generation", started_at=started, finished_at=started + timedelta(seconds=3)
    )

    assert count("job_queue_wait_seconds", **wait) == before[0]  # counted once committed
    record_committed(changes)

    assert count("job_queue_wait_seconds", **wait) == before[0] + 2
    assert total("job_queue_wait_seconds", **wait) == pytest.approx(before[1] + 2.0)
    assert count("job_run_seconds", **run) == ran_before[0] + 1
    assert total("job_run_seconds", **run) == pytest.approx(ran_before[1] + 3.0)
    # Buckets from 5 ms to an hour.
    for le in ("0.005", "3600.0", "+Inf"):
        assert REGISTRY.get_sample_value("job_run_seconds_bucket", {"le": le, **run}) is not None
