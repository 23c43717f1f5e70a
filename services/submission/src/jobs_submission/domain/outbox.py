"""Outbox policy: how long a failed publish waits before the next try, how the entries of one
relay pass are packed into messages, and which batch members a relay may publish."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from jobs_submission.domain.documents import BATCH_ACCEPTED


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


class BatchGate(StrEnum):
    """What a relay does with batch members it claimed, by the state of their batch."""

    PUBLISH = "publish"  # the batch is accepted
    WAIT = "wait"  # still being stored (or its request just died): look again later
    HOLD = "hold"  # abandoned while being stored: out of the relay until a replay reopens it
    DROP = "drop"  # no batch document: the failed request undid it, these are leftovers


def gate_batch_members(
    batch_state: str | None, *, batch_created_ms: int, now_ms: int, abandon_after_ms: int
) -> BatchGate:
    """Only members of an accepted batch are published. A pending batch is waited for until
    ``abandon_after_ms`` after its creation (no request stores a batch for that long), then
    held; ``batch_state`` None means its document is gone."""
    if batch_state is None:
        return BatchGate.DROP
    if batch_state == BATCH_ACCEPTED:
        return BatchGate.PUBLISH
    if now_ms - batch_created_ms >= abandon_after_ms:
        return BatchGate.HOLD
    return BatchGate.WAIT
