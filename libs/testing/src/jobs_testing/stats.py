"""Reference statistics the tests compare the product's figures with."""

from __future__ import annotations

from collections.abc import Sequence


def percentile_cont(values: Sequence[float], fraction: float) -> float | None:
    """PostgreSQL's ``percentile_cont``: linear interpolation between the closest ranks
    (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
