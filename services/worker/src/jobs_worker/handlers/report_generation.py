"""report_generation: a jobs summary read from PostgreSQL, rendered as CSV or JSON.

The summary counts the jobs of the report job's project only (every member of the project
reads them anyway: docs/tenancy.md): the worker reads the project from the job's own row
(``jobs.project_id``, written from the scope the gateway verified) by the dispatch's job id,
never from the payload, which the submitter writes. An administrator's report counts the
project it was submitted to; the platform-wide figures are the dashboard's analytics, which
admins see in full.

Small reports travel inline in the result; larger ones are written as an artifact file."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.contracts import utcnow
from jobs_common.db import create_engine
from jobs_sdk.errors import PermanentJobError
from jobs_worker.adapters.artifacts import artifact_key, artifact_path, write_atomically
from jobs_worker.adapters.jobstore_reader import project_summary
from jobs_worker.domain.report import build_summary, created_bounds, render, summary_rows
from jobs_worker.handlers.config import JobStoreConfig, ReportConfig
from jobs_worker.handlers.payloads import ReportPayload
from jobs_worker.sdk import JobContext, handler, resource

JOB_STORE = "job_store"


@resource(JOB_STORE)
async def job_store() -> AsyncIterator[AsyncEngine]:
    """The job store, read-only here: the report's rows."""
    config = JobStoreConfig.from_env()
    engine = create_engine(config.database_url, pool_size=config.db_pool_size)
    try:
        yield engine
    finally:
        await engine.dispose()


@handler("report_generation", payload=ReportPayload, config=ReportConfig)
async def run(ctx: JobContext, payload: ReportPayload) -> dict[str, Any]:
    config: ReportConfig = ctx.config
    lower, upper = created_bounds(payload.from_, payload.to)
    ctx.log.info("reading the project's jobs created in [%s, %s)", lower or "-", upper or "-")
    found = await project_summary(
        ctx.resource(JOB_STORE), job_id=ctx.job_id, lower=lower, upper=upper
    )
    if found is None:
        raise PermanentJobError(
            "the report job is not recorded in the job store", error_class="JobNotRecorded"
        )
    rows, runtime = found.rows, found.runtime
    ctx.log.info(
        "rows: %d (status, type, priority) groups covering %d jobs",
        len(rows),
        sum(row.count for row in rows),
    )
    summary = build_summary(
        rows, runtime, date_from=payload.from_, date_to=payload.to, generated_at=utcnow()
    )
    rendered = render(summary, payload.format)
    digest = hashlib.sha256(rendered).hexdigest()
    ctx.log.info("rendered %s: %d bytes", payload.format, len(rendered))
    if len(rendered) <= config.report_inline_limit:
        content: dict[str, Any] = (
            {"rows": summary_rows(summary)} if payload.format == "csv" else {"summary": summary}
        )
        return {"format": payload.format, **content, "bytes": len(rendered), "sha256": digest}
    path = artifact_path(config.artifacts_dir, ctx.job_id, ctx.attempt, payload.format)
    artifact = await asyncio.to_thread(write_atomically, path, rendered)
    ctx.log.info(
        "wrote %s (above the inline limit of %d bytes)",
        artifact.path.name,
        config.report_inline_limit,
        extra={"action": "report_written", "path": str(artifact.path)},
    )
    return {
        "format": payload.format,
        "artifact": artifact_key(ctx.job_id, ctx.attempt, payload.format),
        "bytes": artifact.bytes,
        "sha256": artifact.sha256,
    }
