"""Request body limits of the dashboard routes (``jobs_common.body_limit``)."""

from __future__ import annotations

from jobs_common.body_limit import BodyLimits, RouteLimit
from jobs_dashboard.settings import Settings


def body_limits(settings: Settings) -> BodyLimits:
    return BodyLimits(
        default=settings.max_body_bytes,
        routes=(
            # bodies that carry a job payload: a requeue's edit, a schedule's job template
            RouteLimit("/api/dead-letters/{deadLetterId}/requeue", settings.max_job_body_bytes),
            RouteLimit("/api/schedules", settings.max_job_body_bytes),
            RouteLimit("/api/schedules/by-name/{name}", settings.max_job_body_bytes),
            RouteLimit("/api/schedules/{scheduleId}", settings.max_job_body_bytes),  # an edit
        ),
    )
