"""Typed tasks, their handles, chains and groups of the Python client (clients/python)
against the real stack, with a worker serving examples/acme_jobs: ``submit(task, model)``
then ``result()`` gives the task's result model (both clients); a dead job raises
``JobFailed`` with its attempts, a cancelled one ``JobCancelled``; a chain of three runs its
steps one after the other, ``group([...]).then(step)`` runs the step after every member, and a
failed step fails the rest of its chain."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from jobs_client import (
    AsyncJobsClient,
    JobCancelled,
    JobFailed,
    JobsClient,
    NotFound,
    chain,
    group,
    task,
)
from jobs_testing.extra_worker import ExtraWorker
from jobs_testing.stack import Stack

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

USER = ("user@test.com", "user123")
ACME_ENV = {
    "WORKER_HANDLER_MODULES": "acme_jobs.handlers",
    "WORKER_HANDLER_ENTRY_POINTS": "false",  # the acme types only: the built-ins elsewhere
}


# The client's own copies of the handlers' models (examples/acme_jobs): a client needs no
# handler package, only models that read and write the same JSON.
class Reverse(BaseModel):
    text: str


class Reversed(BaseModel):
    reversed: str


class InvoiceLine(BaseModel):
    sku: str
    quantity: int
    unit_cents: int = Field(alias="unitCents")


class Invoice(BaseModel):
    customer: str
    lines: list[InvoiceLine]


class Invoiced(BaseModel):
    customer: str
    total_cents: int = Field(alias="totalCents")
    lines: int


class Sleep(BaseModel):
    seconds: float


reverse = task("acme.reverse", Reverse, Reversed)
invoice = task("acme.invoice", Invoice, Invoiced)
sleep = task("acme.sleep", Sleep)
simulate = task("simulate")

LINES = [
    InvoiceLine(sku="a", quantity=2, unitCents=150),
    InvoiceLine(sku="b", quantity=1, unitCents=5),
]


class AcmeWorker(ExtraWorker):
    """A worker of its own on the shared stack, serving only the acme queue."""

    def __init__(self, stack: Stack, log: Path) -> None:
        super().__init__(stack, log, ACME_ENV, worker_id="acme-tasks")

    async def ready(self, gateway_url: str) -> None:
        """Its /ready answers, and the registry lists the acme types with a live worker."""
        await self.wait_ready()
        async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                types = {t.type: t for t in await jobs.job_types()}
                if all(
                    types.get(n) and types[n].live_workers for n in ("acme.reverse", "acme.sleep")
                ):
                    return
                await asyncio.sleep(0.2)
        raise AssertionError(f"the acme worker is not ready:\n{self.log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
async def acme_worker(
    stack: Stack, gateway_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AcmeWorker]:
    worker = AcmeWorker(stack, tmp_path_factory.mktemp("acme-tasks") / "acme-worker.log")
    worker.start()
    try:
        await worker.ready(gateway_url)
        yield worker
    finally:
        worker.stop()


def until(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


async def test_a_task_s_handle_gives_its_result_model_with_both_clients(
    acme_worker: AcmeWorker, gateway_url: str
) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        handle = jobs.submit(reverse, Reverse(text="hello"), priority=3)
        out = handle.result(timeout=60)
        assert isinstance(out, Reversed) and out.reversed == "olleh"
        job = jobs.wait(handle, timeout=5)
        assert (job.type, job.priority, job.payload) == ("acme.reverse", 3, {"text": "hello"})

    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        billed = await jobs.submit(invoice, Invoice(customer="c-100", lines=LINES))
        # The payload went by alias (unitCents), the result came back by alias (totalCents).
        assert await billed.result(timeout=60) == Invoiced(
            customer="c-100", totalCents=305, lines=2
        )
        untyped = await jobs.submit("acme.reverse", {"text": "abc"})
        assert await untyped.result(timeout=60) == {"reversed": "cba"}


def test_a_dead_job_raises_job_failed_with_its_attempts_and_last_error(
    acme_worker: AcmeWorker, gateway_url: str
) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        unknown = jobs.submit(invoice, Invoice(customer="c-999", lines=LINES))
        with pytest.raises(JobFailed) as raised:
            unknown.result(timeout=60)
        failed = raised.value
        assert (failed.job_id, failed.attempts, failed.reason) == (
            unknown.job_id,
            1,
            "permanent_error",
        )
        assert failed.error is not None and "unknown customer c-999" in failed.error
        assert failed.error_kind, failed.job

        retried = jobs.submit(
            simulate,
            {"immediateFailureRate": 1, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0},
            max_attempts=2,
        )
        with pytest.raises(JobFailed) as raised:
            retried.result(timeout=60)
        assert (raised.value.attempts, raised.value.reason) == (2, "max_attempts")
        assert raised.value.job is not None and len(raised.value.job.attempts) == 2


def test_a_cancelled_job_raises_job_cancelled(acme_worker: AcmeWorker, gateway_url: str) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        handle = jobs.submit(sleep, Sleep(seconds=120))

        def running() -> bool:
            try:
                return jobs.get(handle.job_id).status == "running"
            except NotFound:  # accepted, not recorded by the scheduler yet
                return False

        until("the job to run", running)
        handle.cancel(reason="not needed")
        with pytest.raises(JobCancelled) as raised:
            handle.result(timeout=60)
        assert raised.value.job_id == handle.job_id
        assert raised.value.cancelled_by == USER[0]
        assert not isinstance(raised.value, JobFailed)


def test_a_chain_of_three_runs_its_steps_one_after_the_other(
    acme_worker: AcmeWorker, gateway_url: str
) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        steps = jobs.submit(
            chain(
                reverse.s(Reverse(text="one")),
                reverse.s(Reverse(text="two")),
                reverse.s(Reverse(text="three")),
            )
        )
        assert steps.result(timeout=90) == Reversed(reversed="eerht")
        first, second, third = steps.wait(timeout=10)
        assert {j.batch_id for j in (first, second, third)} == {steps.batch_id}
        assert (first.depends_on, second.depends_on, third.depends_on) == (
            [],
            [first.id],
            [second.id],
        )
        assert first.finished_at and second.started_at and second.finished_at
        assert third.started_at is not None
        assert first.finished_at <= second.started_at
        assert second.finished_at <= third.started_at
        assert [h.result(timeout=5).reversed for h in steps.handles] == ["eno", "owt", "eerht"]


async def test_a_group_then_a_step_runs_the_step_after_every_member(
    acme_worker: AcmeWorker, gateway_url: str
) -> None:
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        fan_in = await jobs.submit(
            group([reverse.s(Reverse(text=t)) for t in ("ab", "cd", "ef")]).then(
                reverse.s(Reverse(text="done"))
            )
        )
        assert await fan_in.result(timeout=90) == Reversed(reversed="enod")
        *members, final = await fan_in.wait(timeout=10)
        assert set(final.depends_on) == {m.id for m in members}
        assert final.started_at is not None
        assert all(m.finished_at and m.finished_at <= final.started_at for m in members)
        outputs = [await h.result(timeout=5) for h in fan_in.handles[:3]]
        assert outputs == [Reversed(reversed=r) for r in ("ba", "dc", "fe")]


def test_a_failed_step_fails_the_rest_of_its_chain(
    acme_worker: AcmeWorker, gateway_url: str
) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        steps = jobs.submit(
            chain(
                invoice.s(Invoice(customer="c-404", lines=LINES)),
                reverse.s(Reverse(text="never")),
            )
        )
        with pytest.raises(JobFailed) as raised:
            steps.result(timeout=90)
        assert (raised.value.job_id, raised.value.attempts) == (steps.job_ids[1], 0)
        assert raised.value.reason == "dependency_failed"
        with pytest.raises(JobFailed) as cause:
            steps.handles[0].result(timeout=10)
        assert cause.value.reason == "permanent_error"


def test_batch_handles_read_each_job_s_result(acme_worker: AcmeWorker, gateway_url: str) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        batch = jobs.submit_batch(
            [reverse.s(Reverse(text="xy")), {"type": "acme.reverse", "payload": {"text": "z"}}]
        )
        assert batch.result(timeout=60) == [Reversed(reversed="yx"), {"reversed": "z"}]
        assert [j.status for j in jobs.wait(batch, timeout=5)] == ["succeeded", "succeeded"]
