"""A submission naming a type the catalog does not know reads the registry again first: a type
recorded a moment after the last reload is found (it was refused as unknown when the miss
fell within the reload throttle), and a flood of misses shares its reloads."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from jobs_common.contracts import JobTypeInfo
from jobs_submission.adapters.job_types import type_document
from jobs_submission.app.type_registry import TypeRegistry

pytestmark = pytest.mark.unit

REVERSE = JobTypeInfo(
    job_type="acme.reverse",
    payload_schema={"type": "object"},
    timeout_seconds=30,
    max_attempts=3,
    queue="default",
)


class Store:
    """The registry's recorded types, and how often they were read."""

    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []
        self.reads = 0

    async def all_types(self) -> list[dict[str, Any]]:
        self.reads += 1
        await asyncio.sleep(0.01)
        return list(self.documents)

    def record(self, info: JobTypeInfo) -> None:
        at = datetime.now(UTC)
        self.documents.append({"_id": info.job_type, **type_document(info, at)})


def registry(store: Store) -> TypeRegistry:
    return TypeRegistry(store, None, refresh_seconds=60, worker_interval=10)  # type: ignore[arg-type]


async def test_a_type_recorded_just_after_a_reload_is_known_to_the_next_miss() -> None:
    store = Store()
    types = registry(store)
    await types.reload()
    store.record(REVERSE)  # within the throttle of the reload above
    catalog = await types.catalog_for(["acme.reverse"])
    assert "acme.reverse" in catalog


async def test_misses_arriving_together_share_one_reload() -> None:
    store = Store()
    types = registry(store)
    await types.reload()
    await asyncio.gather(*(types.catalog_for([f"nope.{n}"]) for n in range(50)))
    assert store.reads - 1 <= 2  # the one the first miss waited for, one for late arrivals
