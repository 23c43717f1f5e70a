"""Heartbeats on jobs.heartbeat: one at start, one per interval listing the running attempt,
stopping while draining, and a last one (stopping, nothing active) at stop."""

from __future__ import annotations

import asyncio
import os
import socket
from importlib.metadata import version
from typing import Any

import pytest
from aio_pika.abc import AbstractIncomingMessage
from prometheus_client import REGISTRY

from jobs_common.contracts import WorkerHeartbeat, parse_message
from jobs_common.topology import HEARTBEAT, READY_QUEUES, RESULTS, RUNNING, lane_for
from jobs_testing.worker_messages import Observer, make_dispatch, quick_simulate

pytestmark = pytest.mark.integration


def heartbeat(message: AbstractIncomingMessage) -> WorkerHeartbeat:
    return parse_message(WorkerHeartbeat, message.body)


def held(beat: WorkerHeartbeat) -> set[tuple[Any, int]]:
    """The attempts a heartbeat lists, by job and attempt."""
    return {(a.job_id, a.attempt) for a in beat.active}


def sent() -> float:
    return REGISTRY.get_sample_value("worker_heartbeats_total", {"outcome": "sent"}) or 0.0


async def test_heartbeats_list_the_running_attempt_and_announce_the_stop(
    start_worker: Any, observer: Observer
) -> None:
    heartbeats = await observer.collect(HEARTBEAT)
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    before = sent()
    runtime = await start_worker(heartbeat_interval=0.1, drain_timeout=20)

    async with asyncio.timeout(10):
        (first, *_) = await heartbeats.wait_for(lambda m: True)
    hello = heartbeat(first)
    assert hello.worker_id == runtime.worker_id
    assert (hello.hostname, hello.pid) == (socket.gethostname(), os.getpid())
    assert hello.version == version("jobs-worker")
    builtin = ["email", "image_resize", "report_generation", "simulate"]
    assert hello.queues == [*READY_QUEUES, *(lane_for(t) for t in builtin)]
    assert hello.types == builtin
    assert hello.concurrency == 20 + 10 + 5
    assert hello.active == [] and hello.stopping is False
    assert hello.started_at <= hello.sent_at

    job = make_dispatch("simulate", quick_simulate(minSeconds=1.5, maxSeconds=1.5))
    mine = (job.job_id, 1)
    await observer.publish(job)
    await observer.wait_running(running, job.job_id)
    async with asyncio.timeout(10):
        listing = await heartbeats.wait_for(
            lambda m: mine in held(heartbeat(m)) and not heartbeat(m).stopping, count=3
        )
    assert {heartbeat(m).started_at for m in listing} == {hello.started_at}
    started = (await observer.wait_running(running, job.job_id)).started_at
    # Each listing carries the attempt's start: a heartbeat read first starts it there.
    assert {a.started_at for m in listing for a in heartbeat(m).active} == {started}

    stopping = asyncio.create_task(runtime.stop())
    async with asyncio.timeout(10):  # draining: still listed (its lease must not expire)
        await heartbeats.wait_for(lambda m: mine in held(heartbeat(m)) and heartbeat(m).stopping)
    async with asyncio.timeout(20):
        await stopping
    assert (await observer.wait_result(results, job.job_id)).outcome == "succeeded"

    published = sent() - before
    async with asyncio.timeout(10):
        await heartbeats.wait_for(lambda m: True, count=int(published))
    last = heartbeat(heartbeats.messages[-1])
    assert last.stopping is True and last.active == []
    times = [heartbeat(m).sent_at for m in heartbeats.messages]
    assert times == sorted(times)
