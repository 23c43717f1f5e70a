"""A statement committed in a transaction of its own, tried again after a short pause when it
fails in a way the next try may not (used off the consumers' path, where nothing else
retries it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

T = TypeVar("T")


def lock_conflict(exc: Exception) -> bool:
    """A deadlock or a serialization failure: the same statement may succeed next time."""
    return isinstance(exc, DBAPIError) and (getattr(exc.orig, "sqlstate", None) or "") in (
        "40P01",
        "40001",
    )


async def commit_retried(
    engine: AsyncEngine,
    work: Callable[[AsyncConnection], Awaitable[T]],
    *,
    attempts: int = 5,
    pause: float,
    retry_if: Callable[[Exception], bool] = lambda _: True,
) -> T:
    """``work`` in a transaction of its own, again after ``pause`` times the attempt while it
    raises an error ``retry_if`` accepts, at most ``attempts`` times; the last error
    propagates."""
    attempt = 1
    while True:
        try:
            async with engine.begin() as connection:
                return await work(connection)
        except Exception as exc:
            if attempt >= attempts or not retry_if(exc):
                raise
        await asyncio.sleep(pause * attempt)
        attempt += 1
