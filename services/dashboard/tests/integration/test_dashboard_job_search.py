"""GET /api/jobs?search=: an id prefix or a payload field, within the caller's jobs, with the
other filters, over their indexes; and each job's latest error labelled by its attempt."""

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import Select, select, text
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

from jobs_common.jobstore import jobs
from jobs_dashboard.adapters.job_search import search_condition
from jobs_dashboard.domain.search import parse_search

pytestmark = pytest.mark.integration


class Explain(Executable, ClauseElement):
    """``EXPLAIN <query>``, its parameters bound as the query's own."""

    inherit_cache = False

    def __init__(self, query: Select[Any]) -> None:
        self.query = query


@compiles(Explain)
def _explain(element: Explain, compiler: SQLCompiler, **kw: Any) -> str:
    return "EXPLAIN " + compiler.process(element.query, **kw)


async def found(client: httpx.AsyncClient, headers: dict[str, str], **params: Any) -> list[str]:
    response = await client.get("/api/jobs", params=params, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["totalItems"] == len(body["items"])
    return [item["jobId"] for item in body["items"]]


async def test_an_id_prefix_finds_the_callers_jobs_starting_with_it(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    hit = uuid.UUID("3f2a9c1b-0000-4000-8000-000000000001")
    longer = uuid.UUID("3f2a9c1b-7700-4000-8000-000000000002")
    await job_factory.job(id=hit)
    await job_factory.job(id=longer)
    await job_factory.job(id=uuid.UUID("3f2a9c1c-0000-4000-8000-000000000003"))
    await job_factory.job(id=uuid.UUID("3f2a9c1a-ffff-4fff-bfff-ffffffffffff"))
    theirs = await job_factory.job(
        id=uuid.UUID("3f2a9c1b-ffff-4fff-bfff-ffffffffffff"), submitted_by=auth.other_email
    )

    assert await found(client, auth.user, search="3F2A9C1B") == [str(longer), str(hit)]
    assert await found(client, auth.user, search="3f2a9c1b-77") == [str(longer)]
    assert await found(client, auth.user, search=str(hit)) == [str(hit)]
    assert await found(client, auth.user, search="3f2a9c1b", status="running") == []
    # another's job is not found by its prefix, except by whom may see it
    assert str(theirs) in await found(client, auth.admin, search="3f2a9c1b")


@pytest.mark.parametrize("search", ["3f2a9c1", "3f2a-9c1b", "not an id", "payload.a.b = 1"])
async def test_a_search_neither_form_accepts_is_a_422_naming_it(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, search: str
) -> None:
    await job_factory.job()
    response = await client.get("/api/jobs", params={"search": search}, headers=auth.user)
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "validation_error"
    assert [d["field"] for d in body["details"]] == ["search"]


async def test_a_payload_field_matches_its_value_as_the_types_schema_reads_it(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    number = await job_factory.job(type="orders", payload={"orderId": 42, "to": "a@b.c"})
    string = await job_factory.job(type="labels", payload={"orderId": "42"})
    await job_factory.job(type="orders", payload={"orderId": 43})
    await job_factory.job(type="orders", payload={"order": {"orderId": 42}})  # not top-level
    await job_factory.job(type="orders", payload={"orderId": 42}, submitted_by=auth.other_email)
    flag = await job_factory.job(type="orders", payload={"urgent": True})

    search = "payload.orderId = 42"
    assert await found(client, auth.user, search=search) == [str(string), str(number)]
    assert await found(client, auth.user, search=search, type="orders") == [str(number)]
    assert await found(client, auth.user, search='payload.orderId = "42"') == [str(string)]
    assert await found(client, auth.user, search="payload.to=a@b.c") == [str(number)]
    assert await found(client, auth.user, search="payload.urgent = true") == [str(flag)]
    assert await found(client, auth.user, search="payload.orderId = 44") == []


@pytest.mark.parametrize("search", ["payload.orderId = 42", "3f2a9c1b"])
async def test_each_search_is_answered_from_its_index(
    store_engine: AsyncEngine, job_factory: Any, search: str
) -> None:
    """With sequential scans off the planner still reads all of ``jobs`` if nothing else
    serves the condition; the plan must use the search's own index."""
    for n in range(30):
        await job_factory.job(payload={"orderId": n})
    parsed = parse_search(search)
    assert parsed is not None
    query = select(jobs.c.id).where(search_condition(parsed))
    async with store_engine.connect() as connection:
        await connection.execute(text("SET enable_seqscan = off"))
        plan = "\n".join((await connection.execute(Explain(query))).scalars())
    index = "ix_jobs_payload" if search.startswith("payload") else "jobs_pkey"
    assert index in plan, plan


async def test_an_error_a_later_attempt_overcame_is_labelled_as_that_attempts(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    recovered = await job_factory.job(
        status="succeeded",
        attempt=2,
        last_error="simulated failure",
        last_error_class="SimulatedFailure",
    )
    await job_factory.attempt(
        recovered, 1, error_class="SimulatedFailure", error="simulated failure"
    )
    await job_factory.attempt(recovered, 2, status="succeeded")
    dead = await job_factory.job(
        status="dead", attempt=3, last_error="boom", last_error_class="RuntimeError"
    )
    await job_factory.attempt(dead, 3, error_class="RuntimeError", error="boom")
    fine = await job_factory.job(status="succeeded")

    items = (await client.get("/api/jobs", headers=auth.user)).json()["items"]
    errors = {item["jobId"]: item["latestError"] for item in items}
    assert errors[str(recovered)] == {
        "attempt": 1,
        "errorClass": "SimulatedFailure",
        "message": "simulated failure",
        "current": False,
    }
    assert errors[str(dead)] == {
        "attempt": 3,
        "errorClass": "RuntimeError",
        "message": "boom",
        "current": True,
    }
    assert errors[str(fine)] is None
    detail = (await client.get(f"/api/jobs/{recovered}", headers=auth.user)).json()
    assert detail["latestError"]["attempt"] == 1
    assert detail["latestError"]["current"] is False


async def test_a_searchs_total_counts_up_to_its_limit_and_says_when_more_match(
    client: httpx.AsyncClient, auth: Any, job_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("jobs_dashboard.api.jobs", "jobs_dashboard.adapters.jobstore"):
        monkeypatch.setattr(f"{module}.COUNT_LIMIT", 3)
    common = [await job_factory.job(payload={"format": "csv"}) for _ in range(5)]
    await job_factory.job(payload={"format": "pdf"})

    body = (
        await client.get(
            "/api/jobs", params={"search": "payload.format = csv", "pageSize": 2}, headers=auth.user
        )
    ).json()
    assert (body["totalItems"], body["totalPages"], body["totalCapped"]) == (3, 2, True)
    assert [item["jobId"] for item in body["items"]] == [str(common[4]), str(common[3])]
    few = (
        await client.get("/api/jobs", params={"search": "payload.format = pdf"}, headers=auth.user)
    ).json()
    assert (few["totalItems"], few["totalCapped"]) == (1, False)
    # a listing without a search counts all its jobs (from the rollups)
    everything = (await client.get("/api/jobs", headers=auth.user)).json()
    assert (everything["totalItems"], everything["totalCapped"]) == (6, False)


async def test_the_batch_and_schedule_filters_take_an_id_as_shown_and_refuse_a_shorter_one(
    client: httpx.AsyncClient, auth: Any, job_factory: Any
) -> None:
    batch = uuid.UUID("7c1d2e3f-0000-4000-8000-000000000001")
    schedule = uuid.UUID("5a6b7c8d-0000-4000-8000-000000000002")
    member = await job_factory.job(batch_id=batch)
    run = await job_factory.job(schedule_id=schedule)
    await job_factory.job(batch_id=uuid.UUID("7c1d2e40-0000-4000-8000-000000000003"))

    assert await found(client, auth.user, batchId="7c1d2e3f") == [str(member)]
    assert await found(client, auth.user, batchId=str(batch)) == [str(member)]
    assert await found(client, auth.user, scheduleId="5A6B7C8D") == [str(run)]
    for params in ({"batchId": "7c1d2e"}, {"scheduleId": "not-an-id"}):
        response = await client.get("/api/jobs", params=params, headers=auth.user)
        assert response.status_code == 422, params
        assert [d["field"] for d in response.json()["details"]] == list(params)
