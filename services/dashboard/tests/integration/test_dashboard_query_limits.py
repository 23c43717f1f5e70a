"""Absurd paging values, filters and ids on every listing family: 422 (or 404 for an id), in
the error envelope naming the parameter, never a 500. Bodies above a route's limit: 413."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from .conftest import Auth, JobFactory

pytestmark = pytest.mark.integration

HUGE = "4143720578230162944"  # a page that overflowed OFFSET (500 before the bound)
ABSURD_INTS = (HUGE, "9" * 40, "-1", "0", "abc", "1.5", "", "x" * 10_000)
LONG = "x" * 10_000
GARBAGE_IDS = ("not-a-uuid", "1", "-1", HUGE, "x" * 10_000, "%00", "..%2F..")


async def refused(
    client: httpx.AsyncClient, path: str, params: dict[str, str], headers: dict[str, str]
) -> str | None:
    """None when the call is refused with a 422 naming the first parameter, else why not."""
    response = await client.get(path, params=params, headers=headers)
    name = next(iter(params))
    if response.status_code != 422:
        return f"{path} {name}={params[name][:20]!r}: {response.status_code}"
    body = response.json()
    fields = {d["field"].split(".")[0] for d in body["details"]}  # status.0 -> status
    if body["error"] != "validation_error" or name not in fields:
        return f"{path} {name}={params[name][:20]!r}: {body}"
    return None


async def all_refused(
    client: httpx.AsyncClient,
    path: str,
    params: dict[str, tuple[str, ...]],
    headers: dict[str, str],
) -> list[str]:
    problems = []
    for name, values in params.items():
        for value in values:
            problem = await refused(client, path, {name: value}, headers)
            if problem is not None:
                problems.append(problem)
    return problems


async def garbage_ids(
    client: httpx.AsyncClient, template: str, headers: dict[str, str], method: str = "GET"
) -> list[str]:
    """Each garbage id in ``template``'s ``{}`` answers 422 or 404, never anything else."""
    problems = []
    for garbage in GARBAGE_IDS:
        response = await client.request(method, template.format(garbage), headers=headers)
        if response.status_code not in (404, 422) or "error" not in response.json():
            problems.append(f"{method} {template} {garbage[:20]!r}: {response.status_code}")
    return problems


PAGING = {"pageNumber": ABSURD_INTS, "pageSize": ABSURD_INTS}
DATES = {"createdFrom": (HUGE, LONG, "not-a-date"), "createdTo": (HUGE, LONG, "2024-13-45")}


async def test_schedules_refuse_absurd_paging_and_ids(
    client: httpx.AsyncClient, auth: Auth
) -> None:
    problems = await all_refused(client, "/api/schedules", PAGING, auth.user)
    problems += await garbage_ids(client, "/api/schedules/{}", auth.user)
    problems += await garbage_ids(client, "/api/schedules/{}/pause", auth.user, "POST")
    problems += await garbage_ids(client, "/api/schedules/{}", auth.user, "DELETE")
    assert problems == []
    # the bounds themselves are fine
    last = await client.get("/api/schedules", params={"pageNumber": 100_000}, headers=auth.user)
    assert last.status_code == 200, last.text
    assert last.json()["items"] == []


async def test_dead_letters_refuse_absurd_paging_filters_and_ids(
    client: httpx.AsyncClient, auth: Auth, job_factory: JobFactory
) -> None:
    await job_factory.dead_letter(await job_factory.job(status="dead"))
    params = {
        **PAGING,
        **DATES,
        "status": ("nope", LONG),
        "reason": (LONG,),
        "jobType": (LONG,),
        "fingerprint": (LONG,),
        "submittedBy": (LONG,),
    }
    problems = await all_refused(client, "/api/dead-letters", params, auth.admin)
    problems += await all_refused(
        client, "/api/dead-letters/groups", {"limit": ABSURD_INTS}, auth.admin
    )
    problems += await garbage_ids(client, "/api/dead-letters/{}", auth.admin)
    problems += await garbage_ids(client, "/api/dead-letters/{}/discard", auth.admin, "POST")
    problems += await garbage_ids(client, "/api/dead-letters/{}/requeue", auth.admin, "POST")
    assert problems == []
    listed = await client.get("/api/dead-letters", params={"pageSize": 100}, headers=auth.admin)
    assert listed.status_code == 200 and listed.json()["totalItems"] == 1


async def test_dead_letter_actions_refuse_absurd_paging_and_ids(
    client: httpx.AsyncClient, auth: Auth
) -> None:
    params = {
        **PAGING,
        "deadLetterId": GARBAGE_IDS[:-2],
        "jobId": GARBAGE_IDS[:-2],
    }
    problems = await all_refused(client, "/api/dead-letters/actions", params, auth.user)
    assert problems == []


async def test_jobs_refuse_absurd_paging_filters_and_ids(
    client: httpx.AsyncClient, auth: Auth, job_factory: JobFactory
) -> None:
    job_id = await job_factory.job()
    params = {
        **PAGING,
        **DATES,
        "sortBy": ("nope", LONG),
        "sortDirection": ("sideways",),
        "type": (LONG, ""),
        "priority": ABSURD_INTS,
        # an id as shown (8+ hex digits) is a prefix: HUGE, 19 decimal digits, is one
        "scheduleId": tuple(v for v in GARBAGE_IDS[:-2] if v != HUGE),
        "batchId": tuple(v for v in GARBAGE_IDS[:-2] if v != HUGE),
        "submittedBy": (LONG,),
    }
    problems = await all_refused(client, "/api/jobs", params, auth.admin)
    # status: too many values, one value too long, an unknown one
    problems += [
        p
        for p in [
            await refused(client, "/api/jobs", {"status": LONG}, auth.admin),
            await refused(client, "/api/jobs", {"status": "nope"}, auth.admin),
        ]
        if p is not None
    ]
    many = await client.get("/api/jobs", params=[("status", "queued")] * 21, headers=auth.admin)
    assert many.status_code == 422, many.text
    problems += await all_refused(
        client,
        f"/api/jobs/{job_id}/logs",
        {"afterId": (HUGE + "0", "9" * 40, "-1", "abc", LONG), "limit": ABSURD_INTS},
        auth.user,
    )
    problems += await garbage_ids(client, "/api/jobs/{}", auth.user)
    problems += await garbage_ids(client, "/api/jobs/{}/logs", auth.user)
    problems += await garbage_ids(client, "/api/jobs/{}/retry", auth.user, "POST")
    problems += await garbage_ids(client, "/api/jobs/{}/cancel", auth.user, "POST")
    assert problems == []
    logs = await client.get(
        f"/api/jobs/{job_id}/logs", params={"afterId": 2**63 - 1}, headers=auth.user
    )
    assert logs.status_code == 200, logs.text


async def test_batches_refuse_absurd_paging_and_ids(client: httpx.AsyncClient, auth: Auth) -> None:
    problems = await all_refused(client, "/api/batches", PAGING, auth.user)
    problems += await garbage_ids(client, "/api/batches/{}", auth.user)
    assert problems == []
    unknown = await client.get(f"/api/batches/{uuid.uuid4()}", headers=auth.user)
    assert unknown.status_code == 404


async def test_analytics_refuse_absurd_windows(client: httpx.AsyncClient, auth: Auth) -> None:
    problems = await all_refused(
        client, "/api/jobs/analytics", {**DATES, "submittedBy": (LONG,)}, auth.admin
    )
    problems += await all_refused(
        client,
        "/api/jobs/analytics/series",
        {"bucketMinutes": ABSURD_INTS, "buckets": ABSURD_INTS},
        auth.admin,
    )
    problems += await all_refused(
        client,
        "/api/workers",
        {"includeDeadForMinutes": (HUGE, "9" * 40, "-1", "abc", LONG)},
        auth.admin,
    )
    assert problems == []


async def test_a_body_above_the_route_limit_is_refused_before_it_is_read(
    client: httpx.AsyncClient, auth: Auth, job_factory: JobFactory
) -> None:
    job_id = await job_factory.job()
    big = b'{"reason": "' + b"x" * (1024 * 1024) + b'"}'
    response = await client.post(
        f"/api/jobs/{job_id}/cancel",
        content=big,
        headers={**auth.user, "content-type": "application/json"},
    )
    assert response.status_code == 413, response.text
    assert response.json()["error"] == "payload_too_large"

    async def chunks() -> Any:
        for _ in range(20):
            yield b"x" * (64 * 1024)

    chunked = await client.post(
        "/api/dead-letters/bulk",
        content=chunks(),
        headers={**auth.admin, "content-type": "application/json"},
    )
    assert chunked.status_code == 413, chunked.text
    # a requeue may carry an edited payload: a larger body reaches validation (unknown: 404)
    requeue = await client.post(
        f"/api/dead-letters/{uuid.uuid4()}/requeue",
        json={"payload": {"imageBase64": "A" * (2 * 1024 * 1024)}},
        headers=auth.admin,
    )
    assert requeue.status_code == 404, requeue.text


async def test_undeclared_methods_answer_405_with_allow(
    client: httpx.AsyncClient, auth: Auth
) -> None:
    for method, path, allowed in (
        ("TRACE", "/api/jobs", "GET"),
        ("PUT", "/api/schedules", "GET, POST"),
        ("DELETE", "/api/dead-letters/actions", "GET"),
        ("PATCH", f"/api/jobs/{uuid.uuid4()}/cancel", "POST"),
    ):
        response = await client.request(method, path, headers=auth.user)
        assert response.status_code == 405, (method, path, response.text)
        assert response.json()["error"] == "method_not_allowed"
        assert set(response.headers["allow"].split(", ")) >= set(allowed.split(", "))
