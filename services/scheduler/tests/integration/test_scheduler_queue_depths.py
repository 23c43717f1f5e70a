"""The relay's view of a ready queue's backlog: the broker's count of ready messages, cached
briefly; a queue the broker does not know (or a broker that does not answer) is unknown."""

from __future__ import annotations

import pytest

from jobs_common import topology
from jobs_common.rabbit import Publisher, RabbitBus
from jobs_scheduler.adapters.queue_depths import QueueDepths
from jobs_testing.worker_messages import make_dispatch

pytestmark = pytest.mark.integration


async def test_a_queues_depth_is_read_cached_and_unknown_when_the_queue_is_missing(
    rabbit_url: str,
) -> None:
    bus = await RabbitBus.open(rabbit_url, name="test-depths")
    try:
        depths = QueueDepths(bus.connection, refresh=60)
        assert await depths.depth(topology.READY_LOW) == 0
        publisher = Publisher(bus.topology.jobs)
        for _ in range(3):
            await publisher.publish(topology.READY_LOW, make_dispatch("simulate", {}, priority=1))
        assert await depths.depth(topology.READY_LOW) == 0  # as read a moment ago
        assert await QueueDepths(bus.connection).depth(topology.READY_LOW) == 3
        assert await depths.depth("jobs.lane.nobody-declared-this") is None
        assert await depths.depth(topology.READY_HIGH) == 0  # a fresh channel after the refusal
    finally:
        await bus.close()
