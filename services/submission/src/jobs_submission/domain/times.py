"""Times as this service's MongoDB documents hold them: epoch milliseconds (compared exactly
on every server, the MongoDB stand-in too)."""

from __future__ import annotations

from datetime import UTC, datetime


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)
