"""Results ready while a JobResults message waits for its confirm go out together."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from jobs_common.contracts import JobLogLine, JobResult, JobResults, utcnow
from jobs_worker.adapters.result_batches import ResultBatcher

pytestmark = pytest.mark.unit


def result() -> JobResult:
    now = utcnow()
    return JobResult(
        job_id=uuid.uuid4(),
        attempt=1,
        worker_id="w",
        outcome="succeeded",
        started_at=now,
        finished_at=now,
    )


class Broker:
    """Confirms a message when the test says so; refuses it when told to."""

    def __init__(self) -> None:
        self.sent: list[JobResults] = []
        self.confirm = asyncio.Event()
        self.refuse = False

    async def send(self, message: JobResults) -> None:
        self.sent.append(message)
        await self.confirm.wait()
        self.confirm.clear()
        if self.refuse:
            raise RuntimeError("nacked")


async def test_a_result_alone_goes_at_once_and_the_next_ones_wait_together() -> None:
    broker = Broker()
    batcher = ResultBatcher(broker.send, max_batch=10)
    first, second, third = result(), result(), result()
    one = asyncio.create_task(batcher.publish(first))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [m.results for m in broker.sent] == [[first]]  # no linger
    two = asyncio.create_task(batcher.publish(second))
    three = asyncio.create_task(batcher.publish(third))
    await asyncio.sleep(0)
    assert not one.done()  # returns only once confirmed
    broker.confirm.set()
    await one
    await asyncio.sleep(0)
    assert [m.results for m in broker.sent] == [[first], [second, third]]
    broker.refuse = True
    broker.confirm.set()
    for task in (two, three):
        with pytest.raises(RuntimeError, match="nacked"):
            await task  # each caller learns its message was not confirmed
    await batcher.close()


async def test_a_message_holds_at_most_max_batch_results() -> None:
    broker = Broker()
    batcher = ResultBatcher(broker.send, max_batch=2)
    broker.confirm.set()
    tasks = [asyncio.create_task(batcher.publish(result())) for _ in range(5)]
    while not all(t.done() for t in tasks):
        broker.confirm.set()
        await asyncio.sleep(0)
    assert [len(m.results) for m in broker.sent] == [2, 2, 1]


class Lines:
    """Queued log lines as the batcher sees them (LogBuffer's take/drop/shipped)."""

    def __init__(self, count: int) -> None:
        now = utcnow()
        self.queued = [
            JobLogLine(
                job_id=uuid.uuid4(), attempt=1, worker_id="w", level="info", message=f"l{i}", at=now
            )
            for i in range(count)
        ]
        self.dropped = 0
        self.shipped_count = 0

    def take(self, max_size: int) -> list[JobLogLine]:
        taken, self.queued = self.queued[:max_size], self.queued[max_size:]
        return taken

    def drop(self, reason: str, count: int = 1) -> None:
        self.dropped += count

    def shipped(self, count: int) -> None:
        self.shipped_count += count


async def test_queued_log_lines_ride_along_up_to_max_lines() -> None:
    broker = Broker()
    lines = Lines(5)
    expected = [line.message for line in lines.queued]
    batcher = ResultBatcher(broker.send, max_batch=10, lines=lines, max_lines=3)
    broker.confirm.set()
    await batcher.publish(result())
    broker.confirm.set()
    await batcher.publish(result())
    assert [[line.message for line in m.lines] for m in broker.sent] == [
        expected[:3],
        expected[3:],
    ]
    assert (lines.shipped_count, lines.dropped) == (5, 0)
    await batcher.close()


async def test_lines_of_a_refused_results_message_are_counted_as_dropped() -> None:
    broker = Broker()
    lines = Lines(2)
    batcher = ResultBatcher(broker.send, lines=lines)
    broker.refuse = True
    broker.confirm.set()
    with pytest.raises(RuntimeError, match="nacked"):
        await batcher.publish(result())
    assert (lines.shipped_count, lines.dropped) == (0, 2)
    await batcher.close()
