"""Pure rules: command preconditions, worker status, batch progress and the
dead-letter filter conditions (compiled, not executed)."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.dialects import postgresql

from jobs_common.contracts import JobStatus
from jobs_common.errors import Conflict
from jobs_dashboard.adapters.dead_letters import dead_letter_conditions
from jobs_dashboard.domain.batches import batch_view
from jobs_dashboard.domain.commands import ensure_cancellable
from jobs_dashboard.domain.dead_letters import (
    DeadLetterFilters,
    DeadLetterState,
)
from jobs_dashboard.domain.query import CreatedRange, Visibility
from jobs_dashboard.domain.workers import (
    heartbeat_horizon,
    horizon_is_live,
    listing_reference,
    shown_since,
    worker_status,
)

pytestmark = pytest.mark.unit

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("status", [s.value for s in JobStatus])
def test_cancel_is_refused_only_for_finished_jobs(status: str) -> None:
    if status in {"succeeded", "dead", "cancelled"}:
        with pytest.raises(Conflict) as caught:
            ensure_cancellable(status)
        assert status in caught.value.message
    else:
        ensure_cancellable(status)


def test_worker_status_is_judged_against_the_heartbeat_horizon() -> None:
    """Dead only when the scheduler has read past the last heartbeat by more than dead_after;
    the wall clock plays no part (the horizon here is an hour behind NOW)."""
    dead_after = timedelta(seconds=10)
    horizon = NOW - timedelta(hours=1)

    def status(behind: float, stopping: bool = False, at: datetime | None = horizon) -> str:
        beat = horizon - timedelta(seconds=behind)
        return worker_status(
            last_heartbeat_at=beat, stopping=stopping, horizon=at, dead_after=dead_after
        )

    assert status(0) == "alive"
    assert status(-5) == "alive"  # sent after the horizon: applied by a faster replica
    assert status(10) == "alive"
    assert status(10.001) == "dead"
    assert status(3, stopping=True) == "stopping"
    assert status(60, stopping=True) == "dead"
    assert status(3600, at=None) == "unknown"  # nobody reads heartbeats: nothing is judged
    assert status(0, stopping=True, at=None) == "unknown"


def test_the_heartbeat_horizon_is_the_smallest_of_the_live_readers() -> None:
    stale_after = timedelta(seconds=90)
    assert heartbeat_horizon([]) is None
    assert heartbeat_horizon([NOW, NOW - timedelta(seconds=3)]) == NOW - timedelta(seconds=3)
    assert horizon_is_live(updated_at=NOW - timedelta(seconds=89), now=NOW, stale_after=stale_after)
    assert not horizon_is_live(
        updated_at=NOW - timedelta(seconds=90), now=NOW, stale_after=stale_after
    )


def test_dead_workers_are_listed_back_from_the_horizon() -> None:
    dead_after = timedelta(seconds=10)
    horizon = NOW - timedelta(minutes=5)
    newest = NOW - timedelta(minutes=7)
    assert listing_reference(horizon=horizon, newest_heartbeat=newest, now=NOW) == horizon
    assert listing_reference(horizon=None, newest_heartbeat=newest, now=NOW) == newest
    assert listing_reference(horizon=None, newest_heartbeat=None, now=NOW) == NOW
    assert shown_since(NOW, dead_after, 60) == NOW - timedelta(minutes=60, seconds=10)
    assert shown_since(horizon, dead_after, 0) == horizon - dead_after


def test_batch_progress() -> None:
    batch_id = uuid.uuid4()

    def view(total: int, found: dict[str, int]) -> tuple[int, int, int, int, int, bool]:
        b = batch_view(
            batch_id=batch_id,
            submitted_by="u",
            project_id=batch_id,
            total=total,
            created_at=NOW,
            found=found,
        )
        assert set(b.counts) == {s.value for s in JobStatus}
        return b.recorded, b.succeeded, b.failed, b.dead, b.cancelled, b.finished

    assert view(3, {}) == (0, 0, 0, 0, 0, False)
    assert view(3, {"succeeded": 2, "dead": 1}) == (3, 2, 1, 1, 0, True)
    assert view(3, {"succeeded": 2}) == (2, 2, 0, 0, 0, False)  # one member not recorded yet
    assert view(3, {"succeeded": 1, "cancelled": 1, "running": 1}) == (3, 1, 0, 0, 1, False)
    assert view(2, {"cancelled": 2}) == (2, 0, 0, 0, 2, True)


def compiled(filters: DeadLetterFilters) -> tuple[str, dict[str, object]]:
    clauses = dead_letter_conditions(filters)
    sql = [
        c.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": False})
        for c in clauses
    ]
    params: dict[str, object] = {}
    for part in sql:
        params.update(part.params)
    return " AND ".join(str(part) for part in sql), params


def test_dead_letter_conditions() -> None:
    sql, params = compiled(DeadLetterFilters(visibility=Visibility(None)))
    assert sql == "dead_letters.resolved_at IS NULL"
    assert params == {}

    sql, params = compiled(
        DeadLetterFilters(
            visibility=Visibility("u@test.com"),
            state=DeadLetterState.RESOLVED,
            fingerprint="KeyError: missing <id>",
            reason="max_attempts",
            job_type="email",
            created=CreatedRange(NOW, NOW + timedelta(days=1)),
            job_status=JobStatus.DEAD,
        )
    )
    assert "jobs.submitted_by = " in sql
    assert "dead_letters.resolved_at IS NOT NULL" in sql
    assert "dead_letters.fingerprint = " in sql
    assert "dead_letters.created_at >= " in sql and "dead_letters.created_at < " in sql
    assert set(params.values()) >= {
        "u@test.com",
        "KeyError: missing <id>",
        "max_attempts",
        "email",
        "dead",
    }

    sql, _ = compiled(DeadLetterFilters(visibility=Visibility(None), state=DeadLetterState.ALL))
    assert sql == ""
    ids = (uuid.uuid4(), uuid.uuid4())
    sql, params = compiled(
        DeadLetterFilters(visibility=Visibility(None), state=DeadLetterState.ALL, ids=ids)
    )
    assert "dead_letters.id IN" in sql
    assert list(params.values()) == [list(ids)]
