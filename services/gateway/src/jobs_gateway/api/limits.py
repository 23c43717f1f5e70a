"""Request body limits of the gateway's routes (``jobs_common.body_limit``).

Each limit on a proxied route is at least the backend's for the same route, so a body that the
backend would refuse field by field (422) gets there instead of stopping at a 413 here.
"""

from __future__ import annotations

from jobs_common.body_limit import BodyLimits, RouteLimit
from jobs_gateway.settings import Settings


def body_limits(settings: Settings) -> BodyLimits:
    return BodyLimits(
        default=settings.max_body_bytes,
        routes=(
            RouteLimit("/auth/*", settings.max_auth_body_bytes),
            RouteLimit("/api/jobs", settings.max_job_body_bytes),
            RouteLimit("/api/batches", settings.max_batch_body_bytes),
            # bodies that carry a job payload: a requeue's edit, a schedule's job template
            RouteLimit("/api/dead-letters/{deadLetterId}/requeue", settings.max_job_body_bytes),
            RouteLimit("/api/schedules", settings.max_job_body_bytes),
            RouteLimit("/api/schedules/by-name/{name}", settings.max_job_body_bytes),
            RouteLimit("/api/schedules/{scheduleId}", settings.max_job_body_bytes),  # an edit
        ),
    )
