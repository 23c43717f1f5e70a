"""The type registry stops between two steps: a catalog read in flight finishes instead of
being cancelled midway (a driver call cancelled midway can leave its connection behind), and
a stop while the broker is away does not wait out the retry pause."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from jobs_submission.adapters.rabbit import BrokerUnavailable
from jobs_submission.app.type_registry import TypeRegistry

pytestmark = pytest.mark.unit


class SlowStore:
    """A catalog read that takes a while, and whether one was cut off."""

    def __init__(self) -> None:
        self.reading = asyncio.Event()
        self.finished = 0
        self.cut_off = 0

    async def all_types(self) -> list[dict[str, Any]]:
        self.reading.set()
        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            self.cut_off += 1
            raise
        self.finished += 1
        return []


class NoBroker:
    async def get(self) -> Any:
        raise BrokerUnavailable("down")


async def test_a_read_in_flight_finishes_and_a_retry_pause_ends_at_once() -> None:
    store = SlowStore()
    registry = TypeRegistry(store, NoBroker(), refresh_seconds=60, worker_interval=10)  # type: ignore[arg-type]
    registry.start()
    await store.reading.wait()
    began = time.monotonic()
    await registry.stop()
    assert (store.finished, store.cut_off) == (1, 0)
    assert time.monotonic() - began < 1.0  # not the consumer's 1 s retry pause
