"""Live views: after a transaction commits, its status changes and stored log lines go to
``jobs.events`` (``job.changes`` / ``job.logs``) for whoever listens (the gateway's
WebSocket). Transient, unconfirmed, never retried: a view that missed some reads the state
back over HTTP. Publishing runs beside the caller, which never waits for it; past
``max_in_flight`` publishes still pending, further ones are dropped and counted.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from typing import Any

import aio_pika
import orjson
from aio_pika.abc import AbstractExchange

from jobs_common.contracts import SCHEMA_VERSION, JobLogLine
from jobs_common.topology import JOB_CHANGES, JOB_LOGS_LIVE
from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.side_rows import Changes, LiveChange

log = logging.getLogger(__name__)

CHUNK = 500  # changes or lines per message (the contracts allow 1,000)


def changes_body(changes: Sequence[LiveChange]) -> bytes:
    """A ``JobChanges`` body, built without validating what the status writer checked."""
    return _body(
        "job.changes",
        "changes",
        [
            {
                "job_id": str(c.job_id),
                "attempt": c.attempt,
                "from_status": c.from_status,
                "to_status": c.to_status,
                "reason": c.reason,
                "job_type": c.job_type,
                "submitted_by": c.submitted_by,
                "project_id": None if c.project_id is None else str(c.project_id),
                "at": c.at,
            }
            for c in changes
        ],
    )


def lines_body(lines: Sequence[JobLogLine]) -> bytes:
    """A ``JobLogTail`` body."""
    return _body("job.log_tail", "lines", [line.model_dump(mode="json") for line in lines])


def _body(kind: str, field: str, items: list[dict[str, Any]]) -> bytes:
    return orjson.dumps(
        {
            "v": SCHEMA_VERSION,
            "message_id": str(uuid.uuid4()),
            "trace_id": uuid.uuid4().hex,
            "type": kind,
            field: items,
        }
    )


class LiveEvents:
    def __init__(self, exchange: AbstractExchange, *, max_in_flight: int = 100) -> None:
        self.exchange = exchange
        self.max_in_flight = max_in_flight
        self._in_flight: set[asyncio.Task[None]] = set()

    def committed(self, changes: Changes) -> None:
        """Publish what ``changes`` committed (call only after the commit)."""
        bodies = [
            (JOB_CHANGES, changes_body(changes.live[i : i + CHUNK]))
            for i in range(0, len(changes.live), CHUNK)
        ] + [
            (JOB_LOGS_LIVE, lines_body(changes.lines[i : i + CHUNK]))
            for i in range(0, len(changes.lines), CHUNK)
        ]
        for routing_key, body in bodies:
            if len(self._in_flight) >= self.max_in_flight:
                metrics.LIVE_EVENTS.labels(routing_key, "dropped").inc()
                continue
            task = asyncio.create_task(self._publish(routing_key, body))
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)

    async def _publish(self, routing_key: str, body: bytes) -> None:
        message = aio_pika.Message(
            body,
            content_type="application/json",
            delivery_mode=aio_pika.DeliveryMode.NOT_PERSISTENT,
            type=routing_key,
        )
        try:
            await self.exchange.publish(message, routing_key, mandatory=False)
        except Exception as exc:
            metrics.LIVE_EVENTS.labels(routing_key, "failed").inc()
            log.debug("live event not published", extra={"error": repr(exc)})
            return
        metrics.LIVE_EVENTS.labels(routing_key, "published").inc()

    async def close(self) -> None:
        """Wait briefly for publishes in flight (shutdown)."""
        if self._in_flight:
            await asyncio.wait(self._in_flight, timeout=2.0)
