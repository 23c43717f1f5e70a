"""SQL expressions shared by the scheduler's adapters."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func


def interval_seconds(value: Any) -> Any:
    """``value`` seconds as a PostgreSQL interval (a number or a column expression)."""
    return func.make_interval(0, 0, 0, 0, 0, 0, value)


def vouched(sent_at: Any) -> Any:
    """The moment a worker's message vouches for (:func:`domain.leases.renewed_at` in SQL):
    its own timestamp, never later than now."""
    return func.least(sent_at, func.now())
