"""report_generation against a real job store: counts, rates and run times of a date range,
of the report job's project's jobs only, whoever submitted them."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from jobs_common.contracts import ErrorKind, JobDispatch
from jobs_common.db import create_engine
from jobs_common.jobstore import jobs
from jobs_common.topology import RESULTS
from jobs_testing.worker_messages import Observer, make_dispatch

pytestmark = pytest.mark.integration


def at(day: str, hour: int = 12) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


OWNER = "tester@example.com"
OTHER = "someone-else@example.com"
TEAM = uuid.uuid4()  # the report job's project
ELSEWHERE = uuid.uuid4()


def row(
    status: str,
    job_type: str,
    priority: int,
    created: datetime,
    run: float | None = None,
    owner: str = OWNER,
    project: uuid.UUID = TEAM,
) -> dict[str, Any]:
    started = created + timedelta(seconds=5) if run is not None else None
    return {
        "id": uuid.uuid4(),
        "type": job_type,
        "priority": priority,
        "payload": {},
        "submitted_by": owner,
        "project_id": project,
        "status": status,
        "attempt": 1,
        "max_attempts": 3,
        "attempt_limit": 3,
        "timeout_seconds": 60,
        "created_at": created,
        "started_at": started,
        "finished_at": started + timedelta(seconds=run) if started and run is not None else None,
    }


ROWS = [
    row("succeeded", "email", 2, at("2025-01-10"), run=1.0, owner=OTHER),  # a colleague's
    row("succeeded", "email", 2, at("2025-01-11"), run=2.0),
    row("succeeded", "email", 2, at("2025-01-01", 0), run=3.0),  # first instant: inside
    row("dead", "simulate", 1, at("2025-01-15"), run=9.0),  # not succeeded: no run time
    row("queued", "image_resize", 3, datetime(2025, 1, 31, 23, 59, 59, tzinfo=UTC)),
    row("succeeded", "email", 1, datetime(2025, 2, 1, tzinfo=UTC), run=50.0),  # outside
    row("cancelled", "email", 3, datetime(2024, 12, 31, 23, 59, 59, tzinfo=UTC)),  # outside
]
# Another project's jobs, in the range and out of it: never in this project's report, even
# the report's own submitter's.
OTHER_ROWS = [
    row("succeeded", "email", 2, at("2025-01-10"), run=1.0, owner=OTHER, project=ELSEWHERE),
    row("dead", "image_resize", 3, at("2025-01-12"), run=1.0, owner=OTHER, project=ELSEWHERE),
    row("queued", "simulate", 1, at("2025-03-01"), owner=OTHER, project=ELSEWHERE),
    row("succeeded", "simulate", 1, at("2025-01-20"), run=1.0, project=ELSEWHERE),
]


@pytest.fixture
async def job_store(jobs_database_url: str) -> str:
    engine = create_engine(jobs_database_url, pool_size=1)
    async with engine.begin() as connection:
        await connection.execute(jobs.insert(), ROWS + OTHER_ROWS)
    await engine.dispose()
    return jobs_database_url


REPORT = {"reportType": "jobs_summary", "from": "2025-01-01", "to": "2025-01-31"}


async def report_job(
    database_url: str, payload: dict[str, Any], *, owner: str, project: uuid.UUID = TEAM
) -> JobDispatch:
    """A dispatch of a report job recorded (running, created now) as ``owner``'s in
    ``project``."""
    dispatch = make_dispatch("report_generation", payload)
    now = datetime.now(UTC)
    recorded = row("running", "report_generation", 3, now, owner=owner, project=project)
    engine = create_engine(database_url, pool_size=1)
    async with engine.begin() as connection:
        await connection.execute(jobs.insert(), [{**recorded, "id": dispatch.job_id}])
    await engine.dispose()
    return dispatch


async def test_json_report_counts_the_range(
    start_worker: Any, observer: Observer, job_store: str
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(database_url=job_store)
    dispatch = await report_job(job_store, {**REPORT, "format": "json"}, owner=OWNER)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded", result.error
    assert result.result is not None
    summary = result.result["summary"]
    assert result.result["format"] == "json"
    assert summary["total"] == 5
    assert {k: v for k, v in summary["byStatus"].items() if v} == {
        "succeeded": 3,
        "dead": 1,
        "queued": 1,
    }
    assert summary["byType"] == {"email": 3, "image_resize": 1, "simulate": 1}
    assert summary["byPriority"] == {"1": 1, "2": 3, "3": 1}
    assert summary["successRate"] == 0.75
    assert summary["runtimeSeconds"] == {"count": 3, "mean": 2.0, "p95": 2.9}
    rendered = orjson.dumps(summary, option=orjson.OPT_INDENT_2)
    assert result.result["bytes"] == len(rendered)
    assert result.result["sha256"] == hashlib.sha256(rendered).hexdigest()


async def test_large_csv_report_becomes_an_artifact(
    start_worker: Any, observer: Observer, job_store: str
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(database_url=job_store, report_inline_limit=10)
    dispatch = await report_job(job_store, {**REPORT, "format": "csv"}, owner=OWNER)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded", result.error
    assert result.result is not None
    assert "rows" not in result.result
    assert result.result["artifact"] == f"{dispatch.job_id}/attempt-1.csv"
    assert "path" not in result.result
    path = Path(os.environ["WORKER_ARTIFACTS_DIR"]) / result.result["artifact"]
    data = await asyncio.to_thread(path.read_bytes)
    assert result.result["sha256"] == hashlib.sha256(data).hexdigest()
    assert result.result["bytes"] == len(data)
    rows = list(csv.reader(io.StringIO(data.decode())))
    assert rows[0] == ["section", "key", "value"]
    assert ["summary", "total", "5"] in rows
    assert ["status", "succeeded", "3"] in rows


async def test_unbounded_report_counts_every_job_of_its_project(
    start_worker: Any, observer: Observer, job_store: str
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(database_url=job_store)
    unbounded = {"reportType": "jobs_summary", "format": "csv"}
    dispatch = await report_job(job_store, unbounded, owner=OWNER)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.result is not None
    # The project's 7 jobs (a colleague's among them) and the report job itself (running);
    # none of another project's 4, its submitter's own there neither.
    assert ["summary", "total", "8"] in result.result["rows"]
    assert ["status", "running", "1"] in result.result["rows"]


async def test_another_projects_report_counts_only_its_jobs(
    start_worker: Any, observer: Observer, job_store: str
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(database_url=job_store)
    dispatch = await report_job(
        job_store, {**REPORT, "format": "json"}, owner=OTHER, project=ELSEWHERE
    )
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded", result.error
    assert result.result is not None
    summary = result.result["summary"]
    assert summary["total"] == 3
    assert summary["byType"] == {"email": 1, "image_resize": 1, "simulate": 1}


async def test_a_report_job_missing_from_the_store_fails_for_good(
    start_worker: Any, observer: Observer, job_store: str
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(database_url=job_store)
    dispatch = make_dispatch("report_generation", {**REPORT, "format": "json"})  # not recorded
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "failed"
    assert result.error is not None
    assert (result.error.kind, result.error.error_class) == (ErrorKind.PERMANENT, "JobNotRecorded")
