"""A replica whose consumer is gone while its connection stays up consumes again on a new
channel within seconds (after a broker restart the robust connection sometimes brings a
channel back without its consumer; until then the replica's read horizon of that queue stood
still and held every lease and claim judgment back, issue 31)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial
from typing import Literal, cast

import aiormq
import pytest

from jobs_common import topology
from jobs_common.contracts import utcnow
from jobs_common.rabbit import BatchConsumer, open_channel
from jobs_scheduler.adapters import metrics
from jobs_scheduler.service import Runtime, start_runtime, stop_runtime
from jobs_scheduler.settings import Settings
from jobs_testing.waiting import eventually

from .conftest import consumer_of

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


Loss = Literal["channel closed", "consumer cancelled"]


async def lose(consumer: BatchConsumer, how: Loss) -> None:
    channel = consumer.queue.channel
    if how == "channel closed":
        await channel.close()  # aio-pika restores no channel closed by its own process
    else:  # the channel stays open without the consumer, aio-pika none the wiser
        underlay = cast(aiormq.Channel, await channel.get_underlay_channel())
        tag = next(iter(underlay.consumers))
        await underlay.basic_cancel(tag)


@pytest.mark.parametrize("how", ["channel closed", "consumer cancelled"])
async def test_a_replicas_lost_consumer_is_found_and_consumed_again_while_another_replica_consumes(
    scheduler_settings: Settings, how: Loss
) -> None:
    settings = scheduler_settings.model_copy(
        update={"consumer_mend_interval_seconds": 0.2, "tick_interval_seconds": 0.1}
    )
    first = await start_runtime(settings)
    # The other replica's consumer keeps the broker's consumer count of the queue above zero:
    # only this replica's own view can tell its consumer is gone.
    second = await start_runtime(settings)
    mended = metrics.CONSUMERS_MENDED.labels(topology.RESULTS)
    mended_before = mended._value.get()
    try:
        assert await first.consumers.ready()
        await lose(consumer_of(first, topology.RESULTS), how)
        lost_at = utcnow()
        assert not await consumer_of(first, topology.RESULTS).ready()

        async def read_again() -> bool:
            horizon = first.consumers.progress.horizons.get(topology.RESULTS)
            return horizon is not None and horizon > lost_at + timedelta(seconds=0.5)

        await eventually(read_again, timeout=15, what="the first replica reading its results again")
        assert await first.consumers.ready()
        assert mended._value.get() == mended_before + 1
        assert all(loop.alive for loop in first.loops)
    finally:
        await stop_runtime(second)
        await stop_runtime(first)


async def test_a_consumer_stopped_on_purpose_stays_stopped(scheduler: Runtime) -> None:
    """The scheduler stops its consumers first when it shuts down: the mend must not bring
    one back meanwhile."""
    consumer = consumer_of(scheduler, topology.HEARTBEAT)
    await consumer.stop()
    new_channel = partial(open_channel, scheduler.bus.connection)
    for _ in range(3):  # two checks in a row would mend a consumer that is gone
        assert await scheduler.consumers.mend(new_channel) == 0
    assert not consumer.active
    await consumer.start()  # as the fixture's stop expects it


async def test_a_consumer_whose_task_ended_unasked_is_mended(scheduler: Runtime) -> None:
    """Only a consumer stopped on purpose stays stopped: one whose task ended for any other
    reason (it once ended on a batch whose channel had closed) is consumed again."""
    consumer = consumer_of(scheduler, topology.HEARTBEAT)
    assert consumer._task is not None
    consumer._task.cancel()
    await asyncio.gather(consumer._task, return_exceptions=True)
    assert not consumer.started and not consumer.stopped

    async def consuming_again() -> bool:  # the runtime's own mend loop, two checks apart
        return consumer.started and await consumer.ready()

    await eventually(consuming_again, timeout=15, what="the consumer mended")
