"""Analytics arithmetic over the counts the store returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

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


# Rollups (the scheduler's migration 0009) count jobs by created minute, hour and day,
# aligned on multiples of their length since this epoch; a runtime bucket k >= 1 holds
# runtimes in [RATIO**(k-1), RATIO**k) ms, bucket 0 those under 1 ms.
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
RUNTIME_RATIO = 1.1


class Source(StrEnum):
    """Where a span of created times is counted from."""

    JOBS = "jobs"  # a scan of the jobs created in the span (a partial minute at most)
    MINUTES = "minute"  # the per-minute rollups
    HOURS = "hour"  # the per-hour rollups
    DAYS = "day"  # the per-day rollups
    DELTAS = "delta"  # the deltas not folded yet (minute-keyed)


GRAINS = ((Source.DAYS, DAY), (Source.HOURS, HOUR), (Source.MINUTES, MINUTE))


@dataclass(frozen=True)
class Span:
    """Created times in [start, end) (None: unbounded) counted from ``source``."""

    source: Source
    start: datetime | None
    end: datetime | None


def floor_to(at: datetime, step: timedelta) -> datetime:
    return EPOCH + ((at - EPOCH) // step) * step


def ceil_to(at: datetime, step: timedelta) -> datetime:
    floor = floor_to(at, step)
    return floor if floor == at else floor + step


def _before(a: datetime | None, b: datetime | None) -> bool:
    """a < b where None is -inf for a start and +inf for an end."""
    return a is None or b is None or a < b


def _whole(
    start: datetime | None, end: datetime | None, grains: tuple[tuple[Source, timedelta], ...]
) -> list[Span]:
    """Spans of [start, end) (minute-aligned) from the coarsest grain that fits, the finer
    ones around it."""
    if not _before(start, end):
        return []
    (source, step), finer = grains[0], grains[1:]
    inner_from = None if start is None else ceil_to(start, step)
    inner_to = None if end is None else floor_to(end, step)
    if finer and not _before(inner_from, inner_to):
        return _whole(start, end, finer)
    spans = _whole(start, inner_from, finer) if start is not None and finer else []
    spans.append(Span(source, inner_from, inner_to))
    if end is not None and finer:
        spans += _whole(inner_to, end, finer)
    return spans


def plan_spans(start: datetime | None, end: datetime | None) -> list[Span]:
    """Split the created range [start, end) into spans the rollups answer exactly: whole
    days from the daily rollups, whole hours around them from the hourly ones, whole minutes
    around those from the per-minute ones, the unfolded deltas over all the whole minutes,
    and the partial minutes at either edge from a scan of ``jobs`` (``ix_jobs_created``)."""
    if start is not None and end is not None and start >= end:
        return []
    minutes_from = None if start is None else ceil_to(start, MINUTE)
    minutes_to = None if end is None else floor_to(end, MINUTE)
    if not _before(minutes_from, minutes_to):
        return [Span(Source.JOBS, start, end)]
    spans: list[Span] = []
    if start is not None and minutes_from != start:
        spans.append(Span(Source.JOBS, start, minutes_from))
    spans += _whole(minutes_from, minutes_to, GRAINS)
    spans.append(Span(Source.DELTAS, minutes_from, minutes_to))
    if end is not None and minutes_to != end:
        spans.append(Span(Source.JOBS, minutes_to, end))
    return spans


@dataclass(frozen=True)
class RuntimeBucket:
    """Succeeded jobs whose runtime fell in one bucket: how many and their runtimes' sum."""

    jobs: int
    runtime_ms: float


def runtime_percentile(buckets: Mapping[int, RuntimeBucket], fraction: float) -> float | None:
    """``percentile_cont(fraction)`` over the runtimes, each bucket's runtimes taken as their
    mean: exact while a bucket holds equal runtimes, else within the bucket's width (10 %)."""
    values = sorted((b.runtime_ms / b.jobs, b.jobs) for b in buckets.values() if b.jobs > 0)
    total = sum(count for _, count in values)
    if total == 0:
        return None

    def at(rank: int) -> float:
        seen = 0
        for value, count in values:
            seen += count
            if rank < seen:
                return value
        return values[-1][0]

    position = fraction * (total - 1)
    low_rank = int(position)
    low, high = at(low_rank), at(min(low_rank + 1, total - 1))
    return low + (high - low) * (position - low_rank)
