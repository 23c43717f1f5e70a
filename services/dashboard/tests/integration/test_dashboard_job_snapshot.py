"""GET /api/jobs/{id}/snapshot: a job page's read. The job as one consistent snapshot, a job
the submission service accepted and the scheduler has not recorded yet, or not found (an id
never submitted, or another user's) at once, all as 200s."""

import uuid
from typing import Any

import httpx
import pytest

from .conftest import USER, headers

pytestmark = pytest.mark.integration


async def test_a_recorded_job_comes_whole_with_attempts_and_timeline(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="running", attempt=2, worker_id="worker-9")
    await job_factory.attempt(job_id, 1, error_class="SimulatedFailure", error="boom")
    await job_factory.attempt(job_id, 2, status="running", worker_id="worker-9")
    await job_factory.event(job_id, from_status="queued", to_status="running", attempt=2)

    answer = await client.get(f"/api/jobs/{job_id}/snapshot", headers=auth.user)

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["state"] == "recorded"
    job = body["job"]
    assert (job["jobId"], job["status"], job["attempt"]) == (str(job_id), "running", 2)
    assert [(a["attempt"], a["status"]) for a in job["attempts"]] == [(1, "failed"), (2, "running")]
    assert [(e["toStatus"], e["attempt"]) for e in job["timeline"]] == [("running", 2)]
    # the user's view, as GET /api/jobs/{id} discloses it: no worker internals
    assert job["workerId"] is None
    assert job == (await client.get(f"/api/jobs/{job_id}", headers=auth.user)).json()


async def test_an_id_never_submitted_is_not_found_at_once(
    client: httpx.AsyncClient, auth: Any
) -> None:
    answer = await client.get(f"/api/jobs/{uuid.uuid4()}/snapshot", headers=auth.user)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"state": "not_found", "job": None}


async def test_another_users_job_is_not_found_like_an_unknown_one(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    job_id = await job_factory.job(status="succeeded")
    answer = await client.get(f"/api/jobs/{job_id}/snapshot", headers=auth.other)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"state": "not_found", "job": None}


async def test_a_malformed_id_is_refused_in_the_error_format(
    client: httpx.AsyncClient, auth: Any
) -> None:
    answer = await client.get("/api/jobs/not-a-uuid/snapshot", headers=auth.user)
    assert answer.status_code == 422
    assert answer.json()["error"] == "validation_error"


@pytest.mark.registry  # the real submission service answers whether it accepted the id
async def test_an_accepted_job_not_recorded_yet_is_accepted_for_its_owner_only(
    client: httpx.AsyncClient, auth: Any, registry_url: str
) -> None:
    async with httpx.AsyncClient(base_url=registry_url) as submission:
        submitted = await submission.post(
            "/api/v1/jobs",
            json={"type": "simulate", "payload": {}},
            headers={**headers(USER), "Idempotency-Key": str(uuid.uuid4())},
        )
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["jobId"]

    mine = await client.get(f"/api/jobs/{job_id}/snapshot", headers=auth.user)
    assert mine.json() == {"state": "accepted", "job": None}
    theirs = await client.get(f"/api/jobs/{job_id}/snapshot", headers=auth.other)
    assert theirs.json() == {"state": "not_found", "job": None}
