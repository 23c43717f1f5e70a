"""A project's usage per UTC day (docs/flow-control.md, "Usage"), ``GET /api/usage``: the
days of the projects the caller sees (one with ``projectId``), within ``from``..``to``, with
their totals; a range the wrong way round or over 366 days refused in the documented format."""

from __future__ import annotations

import uuid
from datetime import date

import httpx
import pytest
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.jobstore import project_usage
from jobs_common.tenancy import OrgRole

from .conftest import ADMIN, headers

pytestmark = pytest.mark.integration

TEAM, OTHER = uuid.uuid4(), uuid.uuid4()
VIEWER = headers(
    Identity(
        user_id="v", email="viewer@team.test", role="user", grants=((str(TEAM), OrgRole.VIEWER),)
    )
)


def day(n: int) -> date:
    return date(2026, 11, n)


async def store_days(engine: AsyncEngine) -> None:
    rows = [
        (TEAM, day(1), 10, 12, 3.5, 9, 1),
        (TEAM, day(2), 5, 5, 1.0, 5, 0),
        (TEAM, day(20), 7, 7, 2.0, 7, 0),
        (OTHER, day(2), 100, 100, 50.0, 100, 0),
    ]
    columns = ("project_id", "day", "submitted", "attempts", "run_seconds", "succeeded", "dead")
    async with engine.begin() as connection:
        await connection.execute(
            insert(project_usage), [dict(zip(columns, r, strict=True)) for r in rows]
        )


async def test_a_viewer_reads_its_project_s_days_within_the_range_with_totals(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    await store_days(store_engine)
    answer = await client.get(
        "/api/usage", params={"from": "2026-11-01", "to": "2026-11-10"}, headers=VIEWER
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [(i["projectId"], i["day"], i["submitted"]) for i in body["items"]] == [
        (str(TEAM), "2026-11-01", 10),
        (str(TEAM), "2026-11-02", 5),
    ]
    assert body["totals"] == {
        "submitted": 15,
        "attempts": 17,
        "runSeconds": 4.5,
        "succeeded": 14,
        "dead": 1,
    }
    assert (body["firstDay"], body["lastDay"]) == ("2026-11-01", "2026-11-10")
    other = await client.get("/api/usage", params={"projectId": str(OTHER)}, headers=VIEWER)
    assert other.json()["items"] == []


async def test_the_platform_admin_reads_every_project_or_one(
    client: httpx.AsyncClient, store_engine: AsyncEngine
) -> None:
    await store_days(store_engine)
    every = await client.get(
        "/api/usage", params={"from": "2026-11-02", "to": "2026-11-02"}, headers=headers(ADMIN)
    )
    assert sorted(i["projectId"] for i in every.json()["items"]) == sorted([str(TEAM), str(OTHER)])
    one = await client.get(
        "/api/usage",
        params={"from": "2026-11-01", "to": "2026-11-30", "projectId": str(TEAM)},
        headers=headers(ADMIN),
    )
    assert one.json()["totals"]["submitted"] == 22


@pytest.mark.parametrize(
    "params",
    [
        {"from": "2026-11-10", "to": "2026-11-01"},
        {"from": "2025-01-01", "to": "2026-11-01"},
        {"from": "yesterday"},
    ],
)
async def test_a_bad_range_is_refused(client: httpx.AsyncClient, params: dict[str, str]) -> None:
    answer = await client.get("/api/usage", params=params, headers=VIEWER)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "validation_error"
