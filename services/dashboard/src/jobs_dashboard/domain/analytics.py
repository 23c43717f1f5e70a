"""Analytics arithmetic over the counts the store returns."""

from __future__ import annotations

from collections.abc import Mapping

from jobs_common.contracts import JobStatus

PRIORITIES = ("1", "2", "3")


def status_counts(found: Mapping[str, int]) -> dict[str, int]:
    """Every JobStatus present, 0 where no job has it."""
    return {status.value: int(found.get(status.value, 0)) for status in JobStatus}


def priority_counts(found: Mapping[str, int]) -> dict[str, int]:
    return {priority: int(found.get(priority, 0)) for priority in PRIORITIES}


def success_rate(counts: Mapping[str, int]) -> float | None:
    """succeeded / (succeeded + dead); None when neither happened."""
    succeeded = counts.get(JobStatus.SUCCEEDED.value, 0)
    dead = counts.get(JobStatus.DEAD.value, 0)
    finished = succeeded + dead
    return succeeded / finished if finished else None
