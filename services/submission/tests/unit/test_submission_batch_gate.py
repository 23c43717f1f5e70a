"""Which claimed batch members a relay publishes: the expected table, written out."""

from __future__ import annotations

import pytest

from jobs_submission.domain.outbox import BatchGate, gate_batch_members

HOUR = 3_600_000
NOW = 10 * HOUR


@pytest.mark.parametrize(
    ("state", "created_ms", "expected"),
    [
        ("accepted", NOW, BatchGate.PUBLISH),
        ("accepted", 0, BatchGate.PUBLISH),  # however old
        ("pending", NOW, BatchGate.WAIT),  # still being stored
        ("pending", NOW - HOUR + 1, BatchGate.WAIT),
        ("pending", NOW - HOUR, BatchGate.HOLD),  # abandoned: no request stores that long
        ("pending", 0, BatchGate.HOLD),
        (None, NOW, BatchGate.DROP),  # its document is gone: the request undid it
        (None, 0, BatchGate.DROP),
    ],
)
def test_only_members_of_an_accepted_batch_are_published(
    state: str | None, created_ms: int, expected: BatchGate
) -> None:
    gate = gate_batch_members(state, batch_created_ms=created_ms, now_ms=NOW, abandon_after_ms=HOUR)
    assert gate is expected
