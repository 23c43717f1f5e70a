"""A served app's heap is frozen once its lifespan's startup has run (no full-collection
pauses walking what lives as long as the process)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
from fastapi import FastAPI

from jobs_common.serve import freeze_heap_after_startup

pytestmark = pytest.mark.unit


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


async def test_the_heap_is_frozen_after_the_app_started_not_before(unfrozen: None) -> None:
    seen: dict[str, int] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        seen["during startup"] = gc.get_freeze_count()
        app.state.resource = [object() for _ in range(1000)]  # what startup opens
        yield

    app = freeze_heap_after_startup(FastAPI(lifespan=lifespan))
    async with app.router.lifespan_context(app):  # as uvicorn runs it
        frozen = gc.get_freeze_count()
    assert seen["during startup"] == 0
    assert frozen > 1000  # the startup's objects among them
