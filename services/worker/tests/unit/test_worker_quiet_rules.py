"""The pieces of quiet and stop that need no broker: the control consumer hands a worker its
own ``WorkerControl`` only, a slot waiter gives up its place when the worker goes quiet, and
the heartbeat carries quiet and the processed / failed tally."""

from __future__ import annotations

import asyncio

import pytest

from jobs_common.contracts import WorkerControl, utcnow
from jobs_sdk.outcomes import OutcomeName
from jobs_worker.api.control import ControlConsumer
from jobs_worker.app.active_jobs import ActiveJobs
from jobs_worker.app.heartbeat import WorkerIdentity, build_heartbeat
from jobs_worker.domain.cancellations import CancelledSet
from jobs_worker.domain.slots import SlotPool
from jobs_worker.domain.tally import Tally

pytestmark = pytest.mark.unit


def control(worker_id: str, command: str = "quiet") -> bytes:
    return WorkerControl(
        worker_id=worker_id, command=command, requested_by="admin@test.com", requested_at=utcnow()
    ).to_json()


def test_only_the_named_worker_acts_on_a_command() -> None:
    received: list[WorkerControl] = []
    consumer = ControlConsumer(
        worker_id="w-1", cancelled=CancelledSet(), active=ActiveJobs(), commands=received.append
    )
    consumer.handle(control("w-2"))
    consumer.handle(b'{"type": "control.worker", "worker_id": "w-1", "command": "pause"}')
    assert received == []
    consumer.handle(control("w-1", "stop"))
    assert [(c.worker_id, c.command) for c in received] == [("w-1", "stop")]


async def test_a_slot_waiter_gives_up_when_the_worker_goes_quiet() -> None:
    pool = SlotPool(1)
    quiet = asyncio.Event()
    outcomes: list[bool] = []

    async def wait_for_a_slot() -> None:
        async with pool.hold(1, unless=quiet) as held:
            outcomes.append(held)

    async with pool.hold(1, unless=quiet) as first:
        assert first is True
        waiter = asyncio.create_task(wait_for_a_slot())
        await asyncio.sleep(0)
        assert outcomes == []
        quiet.set()
        await waiter
        assert outcomes == [False]  # nothing held: it went back without its slot
    assert pool.free == 1  # the running job's slot came back; no waiter left in line
    async with pool.hold(1) as again:
        assert again is True


def test_the_heartbeat_says_quiet_and_carries_the_tally() -> None:
    tally = Tally()
    outcomes: list[OutcomeName] = ["succeeded", "failed", "cancelled", "failed"]
    for outcome in outcomes:
        tally.record(outcome)
    identity = WorkerIdentity.of_this_process(worker_id="w-1", queues=["q"], concurrency=1)
    beat = build_heartbeat(identity, ActiveJobs(), stopping=False, quiet=True, tally=tally)
    assert (beat.quiet, beat.processed, beat.failed) == (True, 4, 2)
    plain = build_heartbeat(identity, ActiveJobs(), stopping=False)
    assert (plain.quiet, plain.processed, plain.failed) == (False, 0, 0)
