"""The live-view bodies read back as their contracts, and a stalled broker cannot pile up
publishes: past the limit in flight they are dropped."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

import pytest
from aio_pika.abc import AbstractExchange

from jobs_common.contracts import JobChanges, JobLogLine, JobLogTail, JobStatus, utcnow
from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.live import CHUNK, LiveEvents, changes_body, lines_body
from jobs_scheduler.adapters.side_rows import Changes

pytestmark = pytest.mark.unit


def moved(changes: Changes, n: int) -> None:
    for _ in range(n):
        changes.move(
            uuid.uuid4(),
            1,
            JobStatus.QUEUED,
            JobStatus.RUNNING,
            "started",
            job_type="simulate",
            submitted_by="a@example.com",
        )


def test_bodies_parse_as_their_contracts() -> None:
    changes = Changes()
    moved(changes, 2)
    parsed = JobChanges.model_validate_json(changes_body(changes.live))
    assert [(c.from_status, c.to_status, c.submitted_by) for c in parsed.changes] == [
        (JobStatus.QUEUED, JobStatus.RUNNING, "a@example.com")
    ] * 2
    line = JobLogLine(
        job_id=uuid.uuid4(), attempt=1, worker_id="w", level="info", message="m", at=utcnow()
    )
    assert JobLogTail.model_validate_json(lines_body([line])).lines == [line]


class StalledExchange:
    """An exchange whose publishes never complete (a broker that stopped reading)."""

    def __init__(self) -> None:
        self.published = 0

    async def publish(self, *_: Any, **__: Any) -> None:
        self.published += 1
        await asyncio.Event().wait()


async def test_publishes_past_the_limit_in_flight_are_dropped() -> None:
    exchange = StalledExchange()
    live = LiveEvents(cast(AbstractExchange, exchange), max_in_flight=2)
    dropped = metrics.LIVE_EVENTS.labels("job.changes", "dropped")
    before = dropped._value.get()
    changes = Changes()
    moved(changes, CHUNK * 3)  # three messages, one more than may be in flight
    live.committed(changes)
    await asyncio.sleep(0)
    assert exchange.published == 2
    assert dropped._value.get() - before == 1
    for task in list(live._in_flight):
        task.cancel()
