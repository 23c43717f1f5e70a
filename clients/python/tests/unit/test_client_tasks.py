"""Typed tasks, their handles, chains and groups without a server: what ``submit`` sends for
a task, a chain, a group and a batch of signatures (the exact bodies), how a finished job
becomes a result or ``JobFailed`` / ``JobCancelled``, and both clients' handles over an httpx
``MockTransport`` standing in for the gateway."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from jobs_client import (
    AsyncJobHandle,
    AsyncJobsClient,
    BatchHandle,
    JobCancelled,
    JobFailed,
    JobHandle,
    JobsClient,
    JobSpec,
    ResultInvalid,
    Retries,
    Submitted,
    WaitTimeout,
    chain,
    chord,
    group,
    task,
)
from jobs_client.models import BatchSubmitted, Job
from jobs_client.submitting import BatchPlan, JobPlan, batch_plan, plan
from jobs_client.tasks import settle
from jobs_client.waiting import wanted_ids

pytestmark = pytest.mark.unit


class Reverse(BaseModel):
    text: str
    due: date | None = Field(default=None, alias="dueOn")


class Reversed(BaseModel):
    reversed: str


reverse = task("acme.reverse", Reverse, Reversed)
loose = task("acme.reverse", Reverse)

JOB: dict[str, Any] = {
    "jobId": "11111111-1111-4111-8111-111111111111",
    "type": "acme.reverse",
    "priority": 2,
    "status": "succeeded",
    "attempt": 1,
    "maxAttempts": 3,
    "submittedBy": "user@test.com",
    "createdAt": "2030-01-02T03:04:05Z",
    "updatedAt": "2030-01-02T03:04:06Z",
    "startedAt": "2030-01-02T03:04:05Z",
    "finishedAt": "2030-01-02T03:04:06Z",
    "lastError": None,
    "scheduleId": None,
    "batchId": None,
    "runAt": None,
    "dependsOn": [],
    "payload": {"text": "abc"},
    "result": {"reversed": "cba"},
    "attempts": [],
    "timeline": [],
}


def job(**changes: Any) -> Job:
    return Job.from_json(JOB | changes)


def batch_body(submission: JobPlan | BatchPlan) -> Any:
    assert isinstance(submission, BatchPlan)
    return submission.call.body


# --- what is sent ---------------------------------------------------------------------------


def test_a_task_sends_its_type_and_its_payload_model_as_json_by_alias() -> None:
    sent = plan(
        reverse,
        Reverse(text="abc", dueOn=date(2030, 1, 2)),
        submitted_by=None,
        idempotency_key="k-1",
        priority=3,
        queue="acme",
    )
    assert isinstance(sent, JobPlan)
    assert (sent.call.method, sent.call.path) == ("POST", "/api/jobs")
    assert sent.call.body == {
        "type": "acme.reverse",
        "payload": {"text": "abc", "dueOn": "2030-01-02"},
        "priority": 3,
        "queue": "acme",
    }
    assert sent.call.headers == {"Idempotency-Key": "k-1"}
    by_name = plan("simulate", {"minSeconds": 0}, submitted_by=None, idempotency_key=None)
    assert isinstance(by_name, JobPlan)
    assert by_name.call.body == {"type": "simulate", "payload": {"minSeconds": 0}}


def test_submit_refuses_what_it_cannot_send() -> None:
    with pytest.raises(TypeError, match="steps carry their payloads"):
        plan(
            chain(reverse.s(Reverse(text="a"))),
            None,
            submitted_by=None,
            idempotency_key=None,
            priority=3,
        )
    with pytest.raises(TypeError, match="needs its payload"):
        plan(reverse, None, submitted_by=None, idempotency_key=None)
    with pytest.raises(TypeError, match="a job type's name, a task"):
        plan(42, {}, submitted_by=None, idempotency_key=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one step"):
        chain()
    with pytest.raises(ValueError, match="at least one signature"):
        group([])
    with pytest.raises(TypeError, match="signatures"):
        group([chain(reverse.s(Reverse(text="a")))])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="names its job type"):
        task("")


def test_a_chain_of_three_is_one_batch_each_step_after_the_one_before() -> None:
    canvas = chain(
        reverse.s(Reverse(text="a")),
        reverse.s(Reverse(text="b"), priority=3, max_attempts=1),
        reverse.s(Reverse(text="c")),
    )
    body = batch_body(plan(canvas, None, submitted_by="ops@test.com", idempotency_key="k"))
    assert body == {
        "jobs": [
            {"type": "acme.reverse", "payload": {"text": "a", "dueOn": None}, "ref": "step0"},
            {
                "type": "acme.reverse",
                "payload": {"text": "b", "dueOn": None},
                "priority": 3,
                "maxAttempts": 1,
                "dependsOn": ["ref:step0"],
                "ref": "step1",
            },
            {
                "type": "acme.reverse",
                "payload": {"text": "c", "dueOn": None},
                "dependsOn": ["ref:step1"],
                "ref": "step2",
            },
        ],
        "submittedBy": "ops@test.com",
    }
    # Celery's pipe is the same chain.
    piped = reverse.s(Reverse(text="a")) | reverse.s(Reverse(text="b"), priority=3, max_attempts=1)
    piped = piped | reverse.s(Reverse(text="c"))
    assert batch_body(plan(piped, None, submitted_by="ops@test.com", idempotency_key="k")) == body


def test_a_group_then_a_step_runs_the_step_after_every_member() -> None:
    outside = "22222222-2222-4222-8222-222222222222"
    canvas = group(
        [
            reverse.s(Reverse(text="a"), ref="fetch-a"),
            reverse.s(Reverse(text="b"), depends_on=[outside]),
        ]
    ).then(chain(reverse.s(Reverse(text="merge")), loose.s(Reverse(text="publish"))))
    body = batch_body(plan(canvas, None, submitted_by=None, idempotency_key=None))
    assert [(j.get("ref"), j.get("dependsOn")) for j in body["jobs"]] == [
        ("fetch-a", None),
        ("step1", [outside]),
        ("step2", ["ref:fetch-a", "ref:step1"]),
        ("step3", ["ref:step2"]),
    ]
    assert [j["payload"]["text"] for j in body["jobs"]] == ["a", "b", "merge", "publish"]
    assert canvas.final == (3,)
    same = chord(
        [reverse.s(Reverse(text="a")), reverse.s(Reverse(text="b"))], loose.s(Reverse(text="d"))
    )
    shape = [
        j.get("dependsOn")
        for j in batch_body(plan(same, None, submitted_by=None, idempotency_key=None))["jobs"]
    ]
    assert shape == [None, None, ["ref:step0", "ref:step1"]]


def test_a_batch_of_signatures_specs_and_mappings_is_sent_as_given() -> None:
    sent = batch_plan(
        [
            reverse.s(Reverse(text="a"), ref="a"),
            JobSpec(type="simulate", payload={}, depends_on=["ref:a"]),
            {"type": "simulate", "payload": {}},
        ],
        name="mixed",
        submitted_by=None,
        idempotency_key="k",
    )
    assert sent.call.body == {
        "jobs": [
            {"type": "acme.reverse", "payload": {"text": "a", "dueOn": None}, "ref": "a"},
            {"type": "simulate", "payload": {}, "dependsOn": ["ref:a"]},
            {"type": "simulate", "payload": {}},
        ],
        "name": "mixed",
    }
    assert sent.reading.final == (0, 1, 2) and not sent.reading.single


# --- how a finished job is read -------------------------------------------------------------


def test_a_succeeded_job_gives_its_result_in_the_task_s_model() -> None:
    assert settle(job(), reverse.read) == Reversed(reversed="cba")
    assert settle(job(), loose.read) == {"reversed": "cba"}
    with pytest.raises(ResultInvalid) as raised:
        settle(job(result={"other": 1}), reverse.read)
    assert raised.value.result == {"other": 1} and raised.value.code == "result_invalid"


def test_a_dead_job_raises_job_failed_with_its_last_error_kind_attempts_and_reason() -> None:
    dead = job(
        status="dead",
        attempt=3,
        result=None,
        lastError="boom",
        lastErrorClass="ValueError",
        deadLetter={"id": "d", "reason": "max_attempts", "lastError": "boom", "createdAt": "x"},
    )
    with pytest.raises(JobFailed) as raised:
        settle(dead, reverse.read)
    failed = raised.value
    assert (failed.job_id, failed.error, failed.error_kind, failed.attempts, failed.reason) == (
        JOB["jobId"],
        "boom",
        "ValueError",
        3,
        "max_attempts",
    )
    assert failed.job is dead and failed.code == "job_failed" and failed.status is None
    assert "after 3 attempt(s) (max_attempts): boom" in str(failed)
    # A child whose parent failed: no attempt, no dead letter; the timeline says why.
    orphan = job(
        status="dead",
        attempt=0,
        result=None,
        timeline=[{"fromStatus": "blocked", "toStatus": "dead", "reason": "dependency_failed"}],
        attempts=[],
    )
    with pytest.raises(JobFailed) as raised:
        settle(orphan, reverse.read)
    assert (raised.value.attempts, raised.value.reason, raised.value.error_kind) == (
        0,
        "dependency_failed",
        None,
    )


def test_a_cancelled_job_raises_job_cancelled() -> None:
    cancelled = job(
        status="cancelled",
        result=None,
        cancelRequestedBy="user@test.com",
        timeline=[{"fromStatus": "running", "toStatus": "cancelled", "reason": "no longer needed"}],
    )
    with pytest.raises(JobCancelled) as raised:
        settle(cancelled, reverse.read)
    assert (raised.value.job_id, raised.value.reason, raised.value.cancelled_by) == (
        JOB["jobId"],
        "no longer needed",
        "user@test.com",
    )
    assert not isinstance(raised.value, JobFailed)


def test_wait_takes_what_submit_batch_returned() -> None:
    batch = BatchSubmitted(
        batch_id="b", job_ids=["j1", "j2"], status="accepted", idempotency_key="k"
    )
    assert wanted_ids(batch) == (["j1", "j2"], False)


# --- the handles, through the clients -------------------------------------------------------


class Gateway:
    """A stand-in for the gateway's job routes: accepts submissions and batches, and answers
    each job as ``jobs`` says (a job not there: 404, a submission record: 200)."""

    def __init__(self, jobs: dict[str, dict[str, Any]]) -> None:
        self.jobs = jobs
        self.received: list[tuple[str, str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        self.received.append((request.method, request.url.path, body))
        if request.url.path == "/api/jobs" and request.method == "POST":
            return httpx.Response(202, json={"jobId": "j1", "status": "accepted"})
        if request.url.path == "/api/batches":
            ids = [f"j{i + 1}" for i in range(len(body["jobs"]))]
            return httpx.Response(202, json={"batchId": "b1", "jobIds": ids, "status": "accepted"})
        job_id = request.url.path.split("/")[3]
        if request.url.path.endswith("/status"):
            return httpx.Response(200, json={"jobId": job_id, "status": "accepted"})
        if job_id not in self.jobs:
            return httpx.Response(404, json={"error": "not_found", "message": "no", "details": []})
        return httpx.Response(200, json=JOB | {"jobId": job_id} | self.jobs[job_id])


def client(gateway: Gateway) -> JobsClient:
    # Port 9 refuses the live events socket at once: the wait polls the stand-in.
    return JobsClient(
        "http://127.0.0.1:9",
        token="t",
        transport=httpx.MockTransport(gateway),
        retries=Retries(attempts=1),
    )


def test_a_handle_s_result_waits_and_reads_the_result_or_raises() -> None:
    gateway = Gateway({"j1": {"result": {"reversed": "olleh"}}})
    with client(gateway) as jobs:
        handle = jobs.submit(reverse, Reverse(text="hello"))
        assert isinstance(handle, JobHandle) and isinstance(handle, Submitted)
        assert handle.job_id == "j1" and len(handle.idempotency_key) == 36
        assert handle.result(timeout=5) == Reversed(reversed="olleh")
        assert jobs.wait(handle, timeout=5).id == "j1"
        by_name = jobs.submit("acme.reverse", {"text": "hello"})
        assert by_name.result(timeout=5) == {"reversed": "olleh"}
        gateway.jobs["j1"] = {"status": "dead", "attempt": 2, "lastError": "no", "result": None}
        with pytest.raises(JobFailed, match="after 2 attempt"):
            handle.result(timeout=5)
        gateway.jobs["j1"] = {"status": "running", "result": None}
        with pytest.raises(WaitTimeout):
            handle.result(timeout=0.3)
    assert gateway.received[0] == (
        "POST",
        "/api/jobs",
        {"type": "acme.reverse", "payload": {"text": "hello", "dueOn": None}},
    )


def test_a_chain_s_handle_has_one_handle_per_step_and_the_last_step_s_result() -> None:
    gateway = Gateway({f"j{i}": {"result": {"reversed": f"r{i}"}} for i in (1, 2, 3)})
    with client(gateway) as jobs:
        steps = jobs.submit(
            chain(
                reverse.s(Reverse(text="a")),
                reverse.s(Reverse(text="b")),
                reverse.s(Reverse(text="c")),
            )
        )
        assert isinstance(steps, BatchHandle) and steps.batch_id == "b1"
        assert [h.job_id for h in steps.handles] == ["j1", "j2", "j3"]
        assert steps.result(timeout=5) == Reversed(reversed="r3")
        assert steps.handles[0].result(timeout=5) == Reversed(reversed="r1")
        assert [j.id for j in steps.wait(timeout=5)] == ["j1", "j2", "j3"]
        members = jobs.submit(group([reverse.s(Reverse(text="a")), loose.s(Reverse(text="b"))]))
        assert members.result(timeout=5) == [Reversed(reversed="r1"), {"reversed": "r2"}]
        gateway.jobs["j2"] = {"status": "cancelled", "result": None}
        with pytest.raises(JobCancelled):
            members.result(timeout=5)
        batch = jobs.submit_batch(
            [reverse.s(Reverse(text="a")), {"type": "simulate", "payload": {}}]
        )
        assert batch.handles[0].result(timeout=5) == Reversed(reversed="r1")
    assert [path for _, path, _ in gateway.received if path == "/api/batches"] == [
        "/api/batches"
    ] * 3


async def test_the_async_client_s_handles_are_awaited() -> None:
    gateway = Gateway({"j1": {"result": {"reversed": "olleh"}}, "j2": {"status": "cancelled"}})
    async with AsyncJobsClient(
        "http://127.0.0.1:9",
        token="t",
        transport=httpx.MockTransport(gateway),
        retries=Retries(attempts=1),
    ) as jobs:
        handle = await jobs.submit(reverse, Reverse(text="hello"))
        assert isinstance(handle, AsyncJobHandle)
        assert await handle.result(timeout=5) == Reversed(reversed="olleh")
        steps = await jobs.submit(chain(reverse.s(Reverse(text="a")), reverse.s(Reverse(text="b"))))
        assert steps.handles[0].job_id == "j1"
        with pytest.raises(JobCancelled):
            await steps.result(timeout=5)
        assert (await steps.handles[0].wait(timeout=5)).succeeded
