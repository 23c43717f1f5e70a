"""Outbox policy: how long a failed publish waits before the next try, and how the entries
of one relay pass are packed into messages."""

from __future__ import annotations

from collections.abc import Sequence


def retry_delay_ms(attempts: int, *, base_seconds: float, max_seconds: float) -> int:
    """Exponential backoff after ``attempts`` failed publishes (1 -> base, 2 -> 2*base ...)."""
    exponent = max(0, min(attempts - 1, 30))
    return int(min(base_seconds * (2**exponent), max_seconds) * 1000)


def pack(sizes: Sequence[int], *, max_items: int, max_bytes: int) -> list[range]:
    """Consecutive groups of items (by their encoded sizes), each of at most ``max_items``
    items and ``max_bytes`` bytes; an item larger than ``max_bytes`` travels alone."""
    groups: list[range] = []
    start, total = 0, 0
    for index, size in enumerate(sizes):
        if index > start and (index - start >= max_items or total + size > max_bytes):
            groups.append(range(start, index))
            start, total = index, 0
        total += size
    if start < len(sizes):
        groups.append(range(start, len(sizes)))
    return groups
