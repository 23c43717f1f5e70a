"""GET /api/jobs keyset pages: following nextCursor visits every job that was there once, in
order, while jobs are being inserted; cursors are checked; pageNumber reaches the first rows."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import httpx
import pytest

from jobs_dashboard.domain.query import MAX_OFFSET_ROWS

pytestmark = pytest.mark.integration

SORTS = {
    "createdAt": lambda i: (i["createdAt"], i["jobId"]),
    "updatedAt": lambda i: (i["updatedAt"], i["jobId"]),
    "priority": lambda i: (i["priority"], i["createdAt"], i["jobId"]),
    "status": lambda i: (i["status"], i["createdAt"], i["jobId"]),
    "type": lambda i: (i["type"], i["createdAt"], i["jobId"]),
}


async def some_jobs(job_factory: Any, rng: random.Random, count: int) -> set[str]:
    base = job_factory.base_time
    ids = set()
    for _ in range(count):
        created = base + timedelta(minutes=rng.randint(0, 5))  # many ties
        job_id = await job_factory.job(
            created_at=created,
            updated_at=created + timedelta(seconds=rng.randint(0, 3)),
            priority=rng.randint(1, 3),
            type=rng.choice(["echo", "email", "report"]),
            status=rng.choice(["queued", "running", "succeeded", "dead"]),
        )
        ids.add(str(job_id))
    return ids


@pytest.mark.parametrize("sort_by", list(SORTS))
@pytest.mark.parametrize("direction", ["asc", "desc"])
async def test_cursor_pages_are_disjoint_and_complete_while_jobs_arrive(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, sort_by: str, direction: str
) -> None:
    rng = random.Random(f"{sort_by}{direction}")
    there = await some_jobs(job_factory, rng, 40)
    params: dict[str, Any] = {"sortBy": sort_by, "sortDirection": direction, "pageSize": 6}
    seen: list[dict[str, Any]] = []
    page_number = 1
    while True:
        body = (await client.get("/api/jobs", params=params, headers=auth.user)).json()
        assert body["pageNumber"] == page_number
        seen += body["items"]
        await some_jobs(job_factory, rng, 3)  # arrive anywhere in the order meanwhile
        if body["nextCursor"] is None:
            break
        assert len(body["items"]) == 6
        params["cursor"] = body["nextCursor"]
        page_number += 1
    ids = [item["jobId"] for item in seen]
    assert len(ids) == len(set(ids)), "a job on two pages"
    assert there <= set(ids), "a job that was there before the first page was skipped"
    keys = [SORTS[sort_by](item) for item in seen]
    assert keys == sorted(keys, reverse=direction == "desc")
    assert body["totalItems"] >= len(there)


async def test_cursor_and_page_numbers_agree(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    await some_jobs(job_factory, random.Random(7), 23)
    by_number: list[str] = []
    for page in (1, 2, 3):
        body = (
            await client.get(
                "/api/jobs",
                params={"pageNumber": page, "pageSize": 10, "sortBy": "type"},
                headers=auth.user,
            )
        ).json()
        by_number += [i["jobId"] for i in body["items"]]
    by_cursor: list[str] = []
    params: dict[str, Any] = {"pageSize": 10, "sortBy": "type"}
    while True:
        body = (await client.get("/api/jobs", params=params, headers=auth.user)).json()
        by_cursor += [i["jobId"] for i in body["items"]]
        assert (body["totalItems"], body["totalPages"]) == (23, 3)
        if body["nextCursor"] is None:
            break
        params["cursor"] = body["nextCursor"]
    assert by_cursor == by_number
    assert body["pageNumber"] == 3


async def test_a_cursor_keeps_its_filters_to_the_caller(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    """A cursor is a position, not a grant: the caller's visibility and filters still apply."""
    for _ in range(4):
        await job_factory.job()
        await job_factory.job(submitted_by=auth.other_email)
    first = (await client.get("/api/jobs", params={"pageSize": 2}, headers=auth.user)).json()
    rest = (
        await client.get(
            "/api/jobs",
            params={"pageSize": 10, "cursor": first["nextCursor"]},
            headers=auth.user,
        )
    ).json()
    assert len(rest["items"]) == 2
    assert {i["submittedBy"] for i in first["items"] + rest["items"]} == {auth.user_email}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cursor": "garbage"}, "cursor"),
        ({"cursor": "x" * 2001}, "cursor"),
        ({"pageNumber": MAX_OFFSET_ROWS // 20 + 1}, "pageNumber"),
        ({"pageNumber": MAX_OFFSET_ROWS // 100 + 1, "pageSize": 100}, "pageNumber"),
    ],
)
async def test_bad_cursors_and_deep_page_numbers_are_refused(
    client: httpx.AsyncClient, auth: Any, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/api/jobs", params=params, headers=auth.user)
    assert response.status_code == 422, response.text
    assert response.json()["details"][0]["field"] == field


async def test_a_cursor_of_another_order_is_refused(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    for _ in range(3):
        await job_factory.job()
    first = (await client.get("/api/jobs", params={"pageSize": 1}, headers=auth.user)).json()
    response = await client.get(
        "/api/jobs",
        params={"pageSize": 1, "cursor": first["nextCursor"], "sortDirection": "asc"},
        headers=auth.user,
    )
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == "cursor"
    last_page = MAX_OFFSET_ROWS // 20
    assert (
        await client.get("/api/jobs", params={"pageNumber": last_page}, headers=auth.user)
    ).status_code == 200
