"""What a blocked job becomes once its parents ended (domain/dependencies.py), written from
the design (shared/DESIGN.md: a child runs when all its parents succeeded, and is dead with
``dependency_failed`` when one did not)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from jobs_common.contracts import TERMINAL_STATUSES
from jobs_scheduler.domain.dependencies import ENDED, after_parents_ended

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
A, B = uuid.UUID(int=1), uuid.UUID(int=2)

# parents (id, status), run_at -> action, reason
RELEASES = [
    ([(A, "succeeded")], None, "queued", "parents succeeded"),
    ([(A, "succeeded"), (B, "succeeded")], None, "queued", "parents succeeded"),
    ([], None, "queued", "parents succeeded"),  # nothing to wait for
    ([(A, "succeeded")], NOW - timedelta(seconds=1), "queued", "parents succeeded"),
    (
        [(A, "succeeded")],
        NOW + timedelta(hours=1),
        "scheduled",
        f"runs at {(NOW + timedelta(hours=1)).isoformat()}",
    ),
    ([(A, "dead")], None, "dead", f"parent job {A} ended dead"),
    ([(A, "cancelled")], None, "dead", f"parent job {A} ended cancelled"),
    ([(A, "succeeded"), (B, "dead")], None, "dead", f"parent job {B} ended dead"),
    ([(A, "cancelled"), (B, "dead")], None, "dead", f"parent job {A} ended cancelled"),
    # a failed parent wins over a run_at to come
    ([(A, "dead")], NOW + timedelta(hours=1), "dead", f"parent job {A} ended dead"),
]


@pytest.mark.parametrize(("parents", "run_at", "action", "reason"), RELEASES)
def test_a_child_runs_only_when_every_parent_succeeded(
    parents: list[tuple[uuid.UUID, str]], run_at: datetime | None, action: str, reason: str
) -> None:
    release = after_parents_ended(parents, run_at=run_at, now=NOW)
    assert (release.action, release.reason) == (action, reason)


@pytest.mark.parametrize("status", ["queued", "running", "failed", "scheduled", "blocked"])
def test_a_parent_that_has_not_ended_is_a_caller_error(status: str) -> None:
    with pytest.raises(ValueError, match="has not ended"):
        after_parents_ended([(A, status)], run_at=None, now=NOW)


def test_ended_is_the_platforms_terminal_set() -> None:
    assert set(ENDED) == {status.value for status in TERMINAL_STATUSES}
