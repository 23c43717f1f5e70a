"""The arithmetic of the queue gauges (pure): recent completion rates per priority and the
time-to-drain estimate built on them."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from datetime import datetime


class CompletionRates:
    """Attempts ended per second, per priority, over about the last ``window`` seconds.

    Each refresh adds what ended since the previous one (``add(start, end, counts)``, times on
    a monotonic clock); samples that ended before the window are dropped, the latest is always
    kept, so the rate covers at least one refresh interval.
    """

    def __init__(self, window: float) -> None:
        self.window = window
        self._samples: deque[tuple[float, float, dict[int, int]]] = deque()

    def add(self, start: float, end: float, counts: Mapping[int, int]) -> None:
        self._samples.append((start, end, dict(counts)))
        while len(self._samples) > 1 and self._samples[0][1] <= end - self.window:
            self._samples.popleft()

    def per_second(self, priority: int) -> float | None:
        """None until a sample covers some time."""
        if not self._samples:
            return None
        span = self._samples[-1][1] - self._samples[0][0]
        if span <= 0:
            return None
        return sum(counts.get(priority, 0) for _, _, counts in self._samples) / span


def time_to_drain(depth: int | None, rate: float | None) -> float | None:
    """Seconds until ``depth`` waiting messages are done at ``rate`` per second: 0 for an empty
    queue; None (no estimate) when the depth is unknown or nothing completed lately."""
    if depth is None:
        return None
    if depth == 0:
        return 0.0
    if rate is None or rate <= 0:
        return None
    return depth / rate


def oldest_age_seconds(now: datetime, oldest: datetime | None) -> float:
    """Age of the oldest queued job at ``now`` (both from the database clock); 0 when none."""
    return 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
