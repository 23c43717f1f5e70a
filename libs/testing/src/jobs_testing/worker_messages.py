"""Test helpers for the worker's integration tests (and anyone driving a worker in tests):
collectors on output queues, an observer connection, dispatch builders. No pytest here."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from aio_pika.abc import AbstractIncomingMessage

from jobs_common.contracts import (
    CancelAttempt,
    JobDispatch,
    JobLogLine,
    JobLogLines,
    JobResult,
    JobResults,
    JobRunning,
    parse_message,
)
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_common.topology import CONTROL_CANCEL, EVENTS_EXCHANGE, ready_queue_for

RESULT_TYPES = ("job.results", "job.result")


class Collector:
    """Every message consumed from one queue, acked on arrival."""

    def __init__(self) -> None:
        self.messages: list[AbstractIncomingMessage] = []
        self.changed = asyncio.Event()

    async def on_message(self, message: AbstractIncomingMessage) -> None:
        self.messages.append(message)
        await message.ack()
        self.changed.set()

    async def wait_for(
        self, predicate: Callable[[AbstractIncomingMessage], bool], *, count: int = 1
    ) -> list[AbstractIncomingMessage]:
        """Wait (bounded by the caller's ``asyncio.timeout``) for ``count`` matches."""
        while True:
            found = [m for m in self.messages if predicate(m)]
            if len(found) >= count:
                return found
            self.changed.clear()
            await self.changed.wait()

    def parsed(self, model: type[Any]) -> list[Any]:
        return [parse_message(model, m.body) for m in self.messages]

    def results(self) -> list[JobResult]:
        """Every result on jobs.results so far, in order (several to a JobResults message)."""
        return [result for message in self._results() for result in message.results]

    def _results(self) -> list[JobResults]:
        return [parse_message(JobResults, m.body) for m in self.messages if m.type in RESULT_TYPES]

    async def wait_results(self, job_id: Any, count: int = 1) -> list[JobResult]:
        """Wait (bounded by the caller) for ``count`` results of ``job_id``."""
        while len(found := [r for r in self.results() if str(r.job_id) == str(job_id)]) < count:
            self.changed.clear()
            await self.changed.wait()
        return found

    async def log_lines(self, job_id: Any, count: int) -> list[JobLogLine]:
        """Wait (bounded by the caller) for ``count`` lines of ``job_id``: on jobs.logs, or
        riding along in a JobResults message (collect both queues)."""

        def lines() -> list[JobLogLine]:
            shipped = [
                line
                for m in self.messages
                if m.type not in RESULT_TYPES
                for line in parse_message(JobLogLines, m.body).lines
            ]
            riding = [line for message in self._results() for line in message.lines]
            return sorted(
                (line for line in shipped + riding if str(line.job_id) == str(job_id)),
                key=lambda line: line.at,
            )

        while len(found := lines()) < count:
            self.changed.clear()
            await self.changed.wait()
        return found


class Observer:
    def __init__(self, bus: RabbitBus) -> None:
        self.bus = bus

    async def collect(self, *queues: str) -> Collector:
        """One collector of everything consumed from ``queues``."""
        collector = Collector()
        channel = await self.bus.connection.channel()
        for queue in queues:
            await (await channel.get_queue(queue)).consume(collector.on_message)
        return collector

    async def message_count(self, queue: str) -> int:
        channel = await self.bus.connection.channel()
        try:
            declared = await (await channel.get_queue(queue)).declare()
            return declared.message_count or 0
        finally:
            await channel.close()

    async def wait_for_count(self, queue: str, expected: int) -> None:
        """Poll the broker (it has no event for this) until ``queue`` holds ``expected``
        ready messages; bound it with ``asyncio.timeout``."""
        while True:
            if await self.message_count(queue) == expected:
                return
            await asyncio.sleep(0.05)

    async def publish(self, dispatch: JobDispatch) -> None:
        await self.bus.publisher.publish(ready_queue_for(dispatch.priority), dispatch)

    async def cancel(self, job_id: uuid.UUID, attempt: int | None, reason: str) -> CancelAttempt:
        """Broadcast ``CancelAttempt`` to every worker, as the scheduler does."""
        message = CancelAttempt(job_id=job_id, attempt=attempt, reason=reason)
        events = await self.bus.exchange(EVENTS_EXCHANGE)
        await Publisher(events).publish(CONTROL_CANCEL, message)
        return message

    async def wait_result(self, results: Collector, job_id: uuid.UUID) -> JobResult:
        async with asyncio.timeout(20):
            (found,) = await results.wait_results(job_id)
        return found

    async def wait_running(self, running: Collector, job_id: uuid.UUID) -> JobRunning:
        async with asyncio.timeout(20):
            found = await running.wait_for(lambda m: job_of(m) == str(job_id))
        return parse_message(JobRunning, found[0].body)


async def until(condition: Callable[[], bool], *, interval: float = 0.01) -> None:
    """Poll an in-process condition that has no event (bound it with ``asyncio.timeout``)."""
    while True:
        if condition():
            return
        await asyncio.sleep(interval)


def job_of(message: AbstractIncomingMessage) -> str | None:
    try:
        value = orjson.loads(message.body).get("job_id")
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def make_dispatch(
    job_type: str,
    payload: dict[str, Any],
    *,
    priority: int = 3,
    timeout_seconds: int = 30,
    attempt: int = 1,
) -> JobDispatch:
    return JobDispatch(
        job_id=uuid.uuid4(),
        attempt=attempt,
        job_type=job_type,
        priority=priority,
        payload=payload,
        timeout_seconds=timeout_seconds,
        dispatched_at=datetime.now(UTC),
    )


def quick_simulate(**overrides: Any) -> dict[str, Any]:
    return {
        "immediateFailureRate": 0,
        "failureRate": 0,
        "minSeconds": 0,
        "maxSeconds": 0,
        "seed": 1,
        **overrides,
    }
