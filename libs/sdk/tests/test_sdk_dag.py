"""Parent results and follow-up jobs as a handler sees them, run with ``jobs_sdk.testing``
(docs/sdk.md, "Parent results" and "Submitting from a handler")."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from jobs_sdk import FailPermanently, JobContext, ParentResultTooLarge, handler
from jobs_sdk.parents import Parent, ParentResults
from jobs_sdk.testing import FollowUpRecorder, run

pytestmark = pytest.mark.unit


class Nothing(BaseModel):
    fail_first: bool = False


class Size(BaseModel):
    width: int


@handler("t.child", payload=Nothing)
async def child(ctx: JobContext, payload: Nothing) -> dict[str, Any]:
    size = ctx.parent_result("resize", Size)
    return {"width": size.width, "by_ref": dict(ctx.parent_results_by_ref)}


@handler("t.resize", payload=Size)
async def resize(ctx: JobContext, payload: Size) -> None:
    return None


@handler("t.fan_out", payload=Nothing)
async def fan_out(ctx: JobContext, payload: Nothing) -> dict[str, Any]:
    first = await ctx.submit(resize, Size(width=10))
    second = await ctx.submit("t.notify", {"to": "x"}, depends_on=[first], delay=timedelta(1))
    if payload.fail_first and ctx.attempt == 1:
        raise RuntimeError("failed after submitting")
    return {"first": str(first), "second": str(second)}


@handler("t.sync_fan_out", payload=Nothing)
def sync_fan_out(ctx: JobContext, payload: Nothing) -> dict[str, Any]:
    return {"id": str(ctx.submit_sync("t.notify", {"n": 1}, key="only-once", priority=3))}


def test_a_child_reads_its_parents_results_by_ref_and_by_id() -> None:
    parent_id = uuid.uuid4()
    outcome = run(child, {}, parents={"resize": {"width": 640}, str(parent_id): {"other": 1}})
    assert outcome.status == "succeeded", outcome.error
    assert outcome.result == {"width": 640, "by_ref": {"resize": {"width": 640}}}


def test_a_missing_parent_fails_naming_the_parents_there_are() -> None:
    outcome = run(child, {}, parents={"crop": {"width": 1}})
    assert outcome.status == "failed"
    assert outcome.error is not None and "no parent resize" in outcome.error.message
    assert "crop" in outcome.error.message


def test_a_result_too_large_to_carry_is_named_not_read() -> None:
    parent = Parent(job_id=uuid.uuid4(), ref="big", omitted=True, size=10_000_000)
    parents = ParentResults([parent])
    assert list(parents) == [parent.job_id] and list(parents.by_ref) == ["big"]
    with pytest.raises(ParentResultTooLarge, match="10000000 bytes"):
        parents.by_ref["big"]
    with pytest.raises(ParentResultTooLarge):
        parents.get(parent.job_id)
    assert issubclass(ParentResultTooLarge, FailPermanently)  # uncaught: no pointless retry


def test_a_job_without_parents_reads_none() -> None:
    outcome = run(child, {})
    assert outcome.status == "failed"
    assert outcome.error is not None and "parents: none" in outcome.error.message


def test_submitted_follow_ups_are_recorded_with_their_job_and_options() -> None:
    outcome = run(fan_out, {})
    assert outcome.status == "succeeded", outcome.error
    first, second = outcome.submitted
    assert (first.job_type, first.payload) == ("t.resize", {"width": 10})
    assert second.job_type == "t.notify"
    assert second.follow_up.depends_on == (str(first.job_id),)
    assert second.follow_up.delay_seconds == 86_400
    assert outcome.result == {"first": str(first.job_id), "second": str(second.job_id)}


def test_a_retried_attempt_enqueues_its_follow_ups_once() -> None:
    follow_ups, job_id = FollowUpRecorder(), uuid.uuid4()
    first = run(fan_out, {"fail_first": True}, follow_ups=follow_ups, job_id=job_id)
    assert first.status == "failed" and len(first.submitted) == 2
    again = run(fan_out, {"fail_first": True}, follow_ups=follow_ups, job_id=job_id, attempt=2)
    assert again.status == "succeeded" and again.submitted == []
    assert len(follow_ups.jobs) == 2
    assert again.result == {
        "first": str(follow_ups.jobs[0].job_id),
        "second": str(follow_ups.jobs[1].job_id),
    }


def test_another_job_submitting_the_same_call_enqueues_its_own() -> None:
    follow_ups = FollowUpRecorder()
    run(fan_out, {}, follow_ups=follow_ups)
    run(fan_out, {}, follow_ups=follow_ups)
    assert len(follow_ups.jobs) == 4


def test_a_sync_handler_submits_with_its_own_key() -> None:
    follow_ups, job_id = FollowUpRecorder(), uuid.uuid4()
    outcome = run(sync_fan_out, {}, follow_ups=follow_ups, job_id=job_id)
    assert outcome.status == "succeeded", outcome.error
    (job,) = outcome.submitted
    assert job.follow_up.key == f"follow-up:{job_id}:key:only-once"
    assert job.follow_up.priority == 3
    assert run(sync_fan_out, {}, follow_ups=follow_ups, job_id=job_id).submitted == []


def test_a_payload_of_another_handler_is_refused_before_submitting() -> None:
    @handler("t.wrong_payload", payload=Nothing)
    async def wrong_payload(ctx: JobContext, payload: Nothing) -> None:
        await ctx.submit(resize, Nothing())

    outcome = run(wrong_payload, {})
    assert outcome.status == "failed" and outcome.submitted == []
    assert outcome.error is not None and "t.resize takes a Size" in outcome.error.message
