"""GET /api/jobs: visibility, paging, sorting, filters and validation over a real job store."""

import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from jobs_common.tenancy import personal_project_id

pytestmark = pytest.mark.integration


async def test_missing_or_wrong_internal_token_is_401(client: httpx.AsyncClient, auth: Any) -> None:
    response = await client.get("/api/jobs")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    forged = {**auth.admin, "x-internal-token": "wrong"}
    assert (await client.get("/api/jobs", headers=forged)).status_code == 401
    no_identity = {"x-internal-token": auth.admin["x-internal-token"]}
    assert (await client.get("/api/jobs", headers=no_identity)).status_code == 401


async def test_user_sees_own_jobs_admin_sees_all(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    mine = {await job_factory.job() for _ in range(3)}
    theirs = {await job_factory.job(submitted_by=auth.other_email) for _ in range(2)}

    as_user = (await client.get("/api/jobs", headers=auth.user)).json()
    assert {item["jobId"] for item in as_user["items"]} == {str(j) for j in mine}
    assert as_user["totalItems"] == 3
    assert {item["submittedBy"] for item in as_user["items"]} == {auth.user_email}

    as_admin = (await client.get("/api/jobs", headers=auth.admin)).json()
    assert {item["jobId"] for item in as_admin["items"]} == {str(j) for j in mine | theirs}

    narrowed = await client.get(
        "/api/jobs", params={"submittedBy": auth.other_email}, headers=auth.admin
    )
    assert {item["jobId"] for item in narrowed.json()["items"]} == {str(j) for j in theirs}


async def test_user_may_not_filter_by_another_submitter(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    await job_factory.job(submitted_by=auth.other_email)
    response = await client.get(
        "/api/jobs", params={"submittedBy": auth.other_email}, headers=auth.user
    )
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    own = await client.get("/api/jobs", params={"submittedBy": auth.user_email}, headers=auth.user)
    assert own.status_code == 200
    # emails compare without case: their own address in capitals is still their own
    shouted = await client.get(
        "/api/jobs", params={"submittedBy": auth.user_email.upper()}, headers=auth.user
    )
    assert shouted.status_code == 200


async def test_summary_shape(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    job_id = await job_factory.job(
        status="dead", attempt=3, attempt_limit=3, last_error="boom", priority=3, type="email"
    )
    item = (await client.get("/api/jobs", headers=auth.user)).json()["items"][0]
    assert item == {
        "jobId": str(job_id),
        "type": "email",
        "priority": 3,
        "status": "dead",
        "attempt": 3,
        "maxAttempts": 3,
        "submittedBy": auth.user_email,
        "projectId": str(personal_project_id(auth.user_email)),  # the trigger's default
        "createdAt": item["createdAt"],
        "updatedAt": item["updatedAt"],
        "startedAt": None,
        "finishedAt": None,
        "lastError": "boom",
        "latestError": {"attempt": 3, "errorClass": None, "message": "boom", "current": True},
        "scheduleId": None,
        "batchId": None,
        "runAt": None,
        "dependsOn": [],
        "cancelRequestedAt": None,
        "retryPolicy": None,
    }
    assert item["createdAt"].startswith("2024-05-01T12:01:00")


async def test_the_project_filter_lists_one_projects_jobs(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    team = uuid.uuid4()
    own = [await job_factory.job() for _ in range(2)]
    teams = [await job_factory.job(project_id=team) for _ in range(3)]
    listed = (
        await client.get("/api/jobs", params={"projectId": str(team)}, headers=auth.user)
    ).json()
    assert [i["jobId"] for i in listed["items"]] == [str(j) for j in reversed(teams)]
    assert {i["projectId"] for i in listed["items"]} == {str(team)}
    everything = (await client.get("/api/jobs", headers=auth.user)).json()
    assert everything["totalItems"] == len(own) + len(teams)


async def test_paging_math(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    ids = [await job_factory.job() for _ in range(25)]
    newest_first = [str(j) for j in reversed(ids)]
    seen: list[str] = []
    for page in (1, 2, 3):
        body = (
            await client.get(
                "/api/jobs", params={"pageNumber": page, "pageSize": 10}, headers=auth.user
            )
        ).json()
        assert (body["pageNumber"], body["pageSize"]) == (page, 10)
        assert (body["totalItems"], body["totalPages"]) == (25, 3)
        seen += [item["jobId"] for item in body["items"]]
    assert seen == newest_first

    beyond = (
        await client.get("/api/jobs", params={"pageNumber": 4, "pageSize": 10}, headers=auth.user)
    ).json()
    assert beyond["items"] == []
    assert (beyond["totalItems"], beyond["totalPages"]) == (25, 3)

    default = (await client.get("/api/jobs", headers=auth.user)).json()
    assert default["pageSize"] == 20
    assert len(default["items"]) == 20


async def test_empty_store_has_zero_pages(client: httpx.AsyncClient, auth: Any) -> None:
    body = (await client.get("/api/jobs", headers=auth.user)).json()
    assert body == {
        "items": [],
        "pageNumber": 1,
        "pageSize": 20,
        "totalItems": 0,
        "totalPages": 0,
        "nextCursor": None,
        "totalCapped": False,
    }


async def test_sorting_is_stable_with_id_tie_break(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    same_time = job_factory.base_time
    ids = [await job_factory.job(priority=p, created_at=same_time) for p in (1, 3, 2, 3, 1, 2)]
    by_priority = sorted(
        ((p, str(j)) for p, j in zip((1, 3, 2, 3, 1, 2), ids, strict=True)),
    )

    asc = (
        await client.get(
            "/api/jobs", params={"sortBy": "priority", "sortDirection": "asc"}, headers=auth.user
        )
    ).json()["items"]
    assert [(i["priority"], i["jobId"]) for i in asc] == by_priority

    desc = (await client.get("/api/jobs", params={"sortBy": "priority"}, headers=auth.user)).json()[
        "items"
    ]
    assert [(i["priority"], i["jobId"]) for i in desc] == list(reversed(by_priority))

    # Equal created_at everywhere: pages must not overlap nor skip (id tie-break).
    paged: list[str] = []
    for page in (1, 2, 3):
        body = (
            await client.get(
                "/api/jobs",
                params={"pageNumber": page, "pageSize": 2, "sortDirection": "asc"},
                headers=auth.user,
            )
        ).json()
        paged += [item["jobId"] for item in body["items"]]
    assert paged == sorted(str(j) for j in ids)


@pytest.mark.parametrize("sort_by", ["updatedAt", "status", "type", "createdAt"])
async def test_sort_fields(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, sort_by: str
) -> None:
    base = job_factory.base_time
    rows = [
        ("running", "b", base + timedelta(minutes=5), base + timedelta(hours=1)),
        ("dead", "c", base + timedelta(minutes=1), base + timedelta(hours=3)),
        ("queued", "a", base + timedelta(minutes=3), base + timedelta(hours=2)),
    ]
    for status, job_type, created, updated in rows:
        await job_factory.job(status=status, type=job_type, created_at=created, updated_at=updated)
    items = (
        await client.get(
            "/api/jobs", params={"sortBy": sort_by, "sortDirection": "asc"}, headers=auth.user
        )
    ).json()["items"]
    values = [item[sort_by] for item in items]
    assert values == sorted(values)
    assert len(set(values)) == 3


async def test_filters(client: httpx.AsyncClient, auth: Any, job_factory: Any) -> None:
    base = job_factory.base_time
    queued = await job_factory.job(status="queued", type="echo", priority=1, created_at=base)
    running = await job_factory.job(
        status="running", type="email", priority=2, created_at=base + timedelta(hours=1)
    )
    dead = await job_factory.job(
        status="dead", type="echo", priority=3, created_at=base + timedelta(hours=2)
    )

    async def ids(**params: Any) -> set[str]:
        response = await client.get("/api/jobs", params=params, headers=auth.user)
        assert response.status_code == 200, response.text
        return {item["jobId"] for item in response.json()["items"]}

    assert await ids(status="queued,dead") == {str(queued), str(dead)}
    assert await ids(status=["running", "dead"]) == {str(running), str(dead)}
    assert await ids(type="echo") == {str(queued), str(dead)}
    assert await ids(priority=2) == {str(running)}
    assert await ids(type="echo", priority=3, status="dead") == {str(dead)}
    hour = base + timedelta(hours=1)
    assert await ids(createdFrom=hour.isoformat()) == {str(running), str(dead)}
    assert await ids(createdTo=hour.isoformat()) == {str(queued)}
    assert await ids(
        createdFrom=hour.isoformat(), createdTo=(hour + timedelta(hours=1)).isoformat()
    ) == {str(running)}
    naive = hour.replace(tzinfo=None).isoformat()
    assert await ids(createdFrom=naive) == {str(running), str(dead)}
    assert await ids(status="cancelled") == set()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageNumber": 0}, "pageNumber"),
        ({"pageNumber": "x"}, "pageNumber"),
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 101}, "pageSize"),
        ({"sortBy": "payload"}, "sortBy"),
        ({"sortDirection": "up"}, "sortDirection"),
        ({"status": "queued,bogus"}, "status"),
        ({"priority": 4}, "priority"),
        ({"priority": 0}, "priority"),
        ({"createdFrom": "yesterday"}, "createdFrom"),
        (
            {"createdFrom": "2024-05-02T00:00:00Z", "createdTo": "2024-05-01T00:00:00Z"},
            "createdTo",
        ),
    ],
)
async def test_bad_query_values_are_422(
    client: httpx.AsyncClient, auth: Any, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/api/jobs", params=params, headers=auth.user)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    assert field in [detail["field"] for detail in body["details"]]
