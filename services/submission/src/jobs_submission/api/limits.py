"""Request body limits of the submission routes (``jobs_common.body_limit``)."""

from __future__ import annotations

from jobs_common.body_limit import BodyLimits, RouteLimit
from jobs_submission.settings import Settings


def body_limits(settings: Settings) -> BodyLimits:
    return BodyLimits(
        default=settings.max_body_bytes,
        routes=(
            RouteLimit("/api/v1/jobs", settings.max_job_body_bytes),
            RouteLimit("/api/v1/batches", settings.max_batch_body_bytes),
            # A payload checked for the dashboard: as large as a job's may be.
            RouteLimit("/internal/v1/job-types", settings.max_job_body_bytes),
        ),
    )
