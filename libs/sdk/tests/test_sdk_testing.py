"""``jobs_worker.testing.run``: one attempt of a handler in-process, decided as the worker
decides (docs/sdk.md, "Testing a handler")."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel

from jobs_sdk import FailPermanently, JobContext, RetryLater, handler
from jobs_sdk.testing import run, run_async

pytestmark = pytest.mark.unit


class Text(BaseModel):
    text: str
    seconds: float = 0.0


class Reversed(BaseModel):
    reversed: str


@handler("t.reverse", payload=Text, result=Reversed)
async def reverse(ctx: JobContext, payload: Text) -> Reversed:
    ctx.log.info("reversing %d characters", len(payload.text))
    await ctx.progress(50, "half way")
    return Reversed(reversed=payload.text[::-1])


@handler("t.wrong", payload=Text, result=Reversed)
async def wrong(ctx: JobContext, payload: Text) -> dict[str, Any]:
    return {"reversed": 42}


@handler("t.later", payload=Text)
def later(ctx: JobContext, payload: Text) -> None:
    raise RetryLater(delay_seconds=7.5, message="partner rate limit")


@handler("t.never", payload=Text)
async def never(ctx: JobContext, payload: Text) -> None:
    raise FailPermanently("invoice 17 does not exist")


@handler("t.broken", payload=Text)
async def broken(ctx: JobContext, payload: Text) -> None:
    raise KeyError("missing")


@handler("t.waits", payload=Text)
async def waits(ctx: JobContext, payload: Text) -> None:
    await asyncio.sleep(payload.seconds)


@handler("t.polls", payload=Text, timeout_seconds=1)
def polls(ctx: JobContext, payload: Text) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while not ctx.cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"stopped": ctx.cancelled}


@handler("t.tidy", payload=Text, timeout_seconds=10, soft_timeout_seconds=1)
async def tidy(ctx: JobContext, payload: Text) -> dict[str, Any]:
    await ctx.wait_cancelled()
    return {"timeLeft": ctx.time_left()}


@handler("t.uses", payload=Text)
async def uses(ctx: JobContext, payload: Text) -> dict[str, Any]:
    return {"got": ctx.resource("t.client").upper()}


@handler("t.self_cancelling", payload=Text)
async def self_cancelling(ctx: JobContext, payload: Text) -> None:
    raise asyncio.CancelledError


def test_a_result_is_checked_and_progress_and_log_lines_are_kept() -> None:
    outcome = run(reverse, {"text": "invoice"})
    assert (outcome.status, outcome.result, outcome.error) == (
        "succeeded",
        {"reversed": "eciovni"},
        None,
    )
    assert outcome.progress == [(50, "half way")]
    assert any("reversing 7 characters" in line for line in outcome.log_lines)
    assert run(reverse, Text(text="ab")).result == {"reversed": "ba"}  # a model payload too
    bad = run(wrong, {"text": "x"})
    assert bad.status == "failed" and bad.error is not None
    assert (bad.error.kind, bad.error.error_class) == ("permanent", "InvalidResult")


def test_failures_are_classified_as_the_worker_classifies_them() -> None:
    retry = run(later, {"text": "x"})
    assert retry.error is not None and retry.error.kind == "retryable"
    assert retry.retry_after_seconds == 7.5 and retry.error.message == "partner rate limit"
    permanent = run(never, {"text": "x"}).error
    assert permanent is not None
    assert (permanent.kind, permanent.error_class) == ("permanent", "FailPermanently")
    other = run(broken, {"text": "x"}).error
    assert other is not None and (other.kind, other.error_class) == (
        "retryable",
        "KeyError",
    )
    invalid = run(reverse, {"txt": "x"}).error
    assert invalid is not None and invalid.error_class == "InvalidPayload"
    own = run(self_cancelling, {"text": "x"}).error
    assert own is not None and own.error_class == "CancelledError"


def test_a_cancel_a_timeout_and_a_soft_timeout() -> None:
    stopped = run(waits, {"text": "x", "seconds": 30}, cancel_after=0.1)
    assert stopped.status == "cancelled"
    timed_out = run(polls, {"text": "x"})
    assert timed_out.error is not None and timed_out.error.error_class == "JobTimeout"
    tidy_run = run(tidy, {"text": "x"})
    assert tidy_run.status == "succeeded" and tidy_run.result is not None
    assert 7 < tidy_run.result["timeLeft"] < 9.2


async def test_resources_are_handed_in_and_it_runs_inside_a_loop_too() -> None:
    outcome = await run_async(uses, {"text": "x"}, resources={"t.client": "abc"})
    assert outcome.result == {"got": "ABC"}
    with pytest.raises(TypeError, match="not a @handler"):
        await run_async(lambda ctx, payload: None, {})
