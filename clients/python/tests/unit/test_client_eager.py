"""``jobs_client.eager``: a client whose submitted jobs run in-process at once, with the
platform's rules (validation at submit, retries, permanent failures, batch dependencies,
idempotency keys), read back through the same handles as against the platform."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from jobs_client import JobFailed, ValidationError, chain, task, task_of
from jobs_client.eager import AsyncEagerJobsClient, EagerJobsClient
from jobs_sdk import FailPermanently, JobContext, RetryLater, handler

pytestmark = pytest.mark.unit

CALLS: list[str] = []


class Text(BaseModel):
    text: str


class Reversed(BaseModel):
    reversed: str


@handler("t.reverse", payload=Text, result=Reversed)
async def reverse(ctx: JobContext, payload: Text) -> Reversed:
    CALLS.append(f"reverse:{ctx.attempt}")
    return Reversed(reversed=payload.text[::-1])


@handler("t.flaky", payload=Text, max_attempts=3)
async def flaky(ctx: JobContext, payload: Text) -> dict[str, Any]:
    CALLS.append(f"flaky:{ctx.attempt}")
    if payload.text == "never":
        raise ConnectionError("partner down")
    if ctx.attempt < 2:
        raise RetryLater(30, "busy")
    return {"attempt": ctx.attempt}


@handler("t.refuse", payload=Text)
def refuse(ctx: JobContext, payload: Text) -> None:
    CALLS.append("refuse")
    raise FailPermanently(f"no {payload.text}")


@handler("t.shout", payload=Text)
async def shout(ctx: JobContext, payload: Text) -> dict[str, Any]:
    """A chain's second step: reads the first step's result, enqueues a follow-up."""
    first = ctx.parent_result("first", Reversed)
    await ctx.submit(reverse, Text(text=first.reversed.upper()))
    CALLS.append(f"shout:{ctx.attempt}")
    if ctx.attempt == 1:
        raise ConnectionError("flaky after its submit")
    return {"shouted": first.reversed.upper()}


REVERSE = task("t.reverse", Text, Reversed)
FLAKY = task("t.flaky", Text)
REFUSE = task("t.refuse", Text)


@pytest.fixture(autouse=True)
def _calls() -> None:
    CALLS.clear()


@pytest.fixture
def jobs() -> EagerJobsClient:
    return EagerJobsClient([reverse, flaky, refuse])


def test_a_typed_task_returns_its_parsed_result(jobs: EagerJobsClient) -> None:
    handle = jobs.submit(REVERSE, Text(text="abc"))
    assert handle.result() == Reversed(reversed="cba")
    job = jobs.get(handle.job_id)
    assert (job.status, job.attempt, job.result) == ("succeeded", 1, {"reversed": "cba"})


def test_a_handlers_own_declaration_is_its_task(jobs: EagerJobsClient) -> None:
    own = task_of(reverse)
    assert (own.name, own.payload_model, own.result_model) == ("t.reverse", Text, Reversed)
    assert jobs.submit(own, Text(text="ab")).result().reversed == "ba"
    with pytest.raises(TypeError, match="not a @handler function"):
        task_of(print)


def test_retry_later_runs_the_next_attempt_at_once(jobs: EagerJobsClient) -> None:
    assert jobs.submit(FLAKY, Text(text="x")).result() == {"attempt": 2}
    assert CALLS == ["flaky:1", "flaky:2"]


def test_failures_end_dead_with_the_platforms_reasons(jobs: EagerJobsClient) -> None:
    with pytest.raises(JobFailed) as used_up:
        jobs.submit(FLAKY, Text(text="never")).result()
    assert (used_up.value.reason, used_up.value.attempts) == ("max_attempts", 3)
    assert used_up.value.error_kind == "ConnectionError"
    with pytest.raises(JobFailed) as refused:
        jobs.submit(REFUSE, Text(text="way")).result()
    assert (refused.value.reason, refused.value.attempts, refused.value.error) == (
        "permanent_error",
        1,
        "no way",
    )


def test_a_chain_runs_in_order_and_a_failed_step_fails_the_rest(jobs: EagerJobsClient) -> None:
    done = jobs.submit(chain(FLAKY.s(Text(text="a")), REVERSE.s(Text(text="bc"))))
    assert done.result() == Reversed(reversed="cb")
    assert CALLS == ["flaky:1", "flaky:2", "reverse:1"]
    CALLS.clear()
    broken = jobs.submit(chain(REFUSE.s(Text(text="a")), REVERSE.s(Text(text="b"))))
    with pytest.raises(JobFailed) as failed:
        broken.result()
    assert failed.value.reason == "dependency_failed"
    assert CALLS == ["refuse"]  # the second step never ran


def test_a_child_reads_its_parents_result_and_follow_ups_run_once() -> None:
    jobs = EagerJobsClient([reverse, shout])
    steps = chain(REVERSE.s(Text(text="ab"), ref="first"), task("t.shout", Text).s(Text(text="")))
    assert jobs.submit(steps).result() == {"shouted": "BA"}
    # the retried second step submitted its follow-up again: one job, run after it
    follow_ups = [j for j in jobs.platform.jobs.values() if j.body["payload"] == {"text": "BA"}]
    assert len(follow_ups) == 1 and follow_ups[0].result == {"reversed": "AB"}
    assert CALLS == ["reverse:1", "shout:1", "shout:2", "reverse:1"]


def test_bad_input_is_refused_at_submit_and_nothing_runs(jobs: EagerJobsClient) -> None:
    with pytest.raises(ValidationError) as unknown:
        jobs.submit("t.unknown", {"text": "x"})
    assert unknown.value.status == 422 and unknown.value.details[0].field == "type"
    with pytest.raises(ValidationError) as invalid:
        jobs.submit("t.reverse", {"txt": "x"})
    assert invalid.value.details[0].field == "payload.text"
    assert CALLS == [] and jobs.platform.jobs == {}


def test_an_idempotency_key_makes_one_job(jobs: EagerJobsClient) -> None:
    first = jobs.submit(REVERSE, Text(text="ab"), idempotency_key="order-1")
    again = jobs.submit(REVERSE, Text(text="ab"), idempotency_key="order-1")
    assert again.job_id == first.job_id and again.replayed and not first.replayed
    assert CALLS == ["reverse:1"]


async def test_the_async_client_runs_them_alike() -> None:
    jobs = AsyncEagerJobsClient([reverse, refuse])
    handle = await jobs.submit(REVERSE, Text(text="xyz"))
    assert (await handle.result()).reversed == "zyx"
    with pytest.raises(JobFailed):
        await (await jobs.submit(REFUSE, Text(text="x"))).result()


def test_only_handler_functions_are_taken() -> None:
    with pytest.raises(TypeError, match="not a @handler function"):
        EagerJobsClient([print])
