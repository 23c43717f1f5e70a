"""Live views: every committed status change and stored log line reaches ``jobs.events``
(``job.changes`` / ``job.logs``), after the commit, with the job's owner and type."""

from __future__ import annotations

import uuid
from typing import Any

import aio_pika
import pytest

from jobs_common import topology
from jobs_common.contracts import (
    JobChanges,
    JobLogLine,
    JobLogTail,
    JobResults,
    JobsSubmitted,
    utcnow,
)
from jobs_common.rabbit import RabbitBus
from jobs_testing.waiting import eventually

from .conftest import job_result, next_dispatch, submitted

pytestmark = pytest.mark.integration


async def live_queue(bus: RabbitBus) -> aio_pika.abc.AbstractQueue:
    queue = await bus.channel.declare_queue(exclusive=True, auto_delete=True)
    await queue.bind(bus.topology.events, routing_key=topology.JOB_EVENT_PATTERN)
    return queue


class Listener:
    """What a live view received so far, by job."""

    def __init__(self, queue: aio_pika.abc.AbstractQueue) -> None:
        self.queue = queue
        self.changes: list[Any] = []
        self.lines: list[JobLogLine] = []

    async def drain(self) -> None:
        while (message := await self.queue.get(no_ack=True, fail=False)) is not None:
            if message.routing_key == topology.JOB_CHANGES:
                self.changes.extend(JobChanges.model_validate_json(message.body).changes)
            else:
                assert message.routing_key == topology.JOB_LOGS_LIVE
                self.lines.extend(JobLogTail.model_validate_json(message.body).lines)

    async def moves_of(self, job_id: uuid.UUID, count: int) -> list[tuple[str | None, str]]:
        async def enough() -> list[tuple[str | None, str]] | None:
            await self.drain()
            moves = [(c.from_status, c.to_status) for c in self.changes if c.job_id == job_id]
            return moves if len(moves) >= count else None

        return await eventually(enough, what=f"{count} live changes of {job_id}")


async def test_each_committed_change_is_published_with_its_owner(bus: RabbitBus) -> None:
    listener = Listener(await live_queue(bus))
    project = uuid.uuid4()  # its members hear the changes (the gateway's live hub)
    message = submitted(submitted_by="owner@example.com", job_type="simulate").model_copy(
        update={"project_id": project}
    )
    await bus.publisher.publish(topology.SUBMITTED, message)

    assert await listener.moves_of(message.job_id, 2) == [(None, "pending"), ("pending", "queued")]
    recorded = [c for c in listener.changes if c.job_id == message.job_id]
    assert {(c.submitted_by, c.job_type, c.project_id) for c in recorded} == {
        ("owner@example.com", "simulate", project)
    }
    assert [c.attempt for c in recorded] == [0, 1]

    dispatch = await next_dispatch(bus)
    line = JobLogLine(
        job_id=message.job_id,
        attempt=1,
        worker_id="w1",
        level="info",
        message="half way",
        at=utcnow(),
    )
    report = JobResults(results=[job_result(dispatch.job_id, 1)], lines=[line])
    await bus.publisher.publish(topology.RESULTS, report)

    # The result overtook its JobRunning: queued -> running -> succeeded, one change each.
    moves = await listener.moves_of(message.job_id, 4)
    assert moves[2:] == [("queued", "running"), ("running", "succeeded")]
    succeeded = next(c for c in listener.changes if c.to_status == "succeeded")
    assert succeeded.submitted_by == "owner@example.com" and succeeded.attempt == 1
    assert succeeded.project_id == project

    async def tail() -> list[str] | None:
        await listener.drain()
        return [x.message for x in listener.lines if x.job_id == message.job_id] or None

    assert await eventually(tail, what="the log line on job.logs") == ["half way"]


async def test_a_batch_of_changes_is_split_into_bounded_messages(bus: RabbitBus) -> None:
    queue = await live_queue(bus)
    jobs = [submitted() for _ in range(300)]  # 600 changes: two messages
    await bus.publisher.publish(topology.SUBMITTED, JobsSubmitted(jobs=jobs))
    sizes: list[int] = []

    async def all_of_them() -> bool | None:
        while (message := await queue.get(no_ack=True, fail=False)) is not None:
            sizes.append(len(JobChanges.model_validate_json(message.body).changes))
        return True if sum(sizes) >= 600 else None

    await eventually(all_of_them, what="600 live changes")
    assert sum(sizes) == 600 and max(sizes) <= 500
