"""The gateway's body limits per route: at least the backends' defaults for the same routes
(so their per-field 422s reach the client), small for /auth."""

from __future__ import annotations

import pytest

from jobs_common.body_limit import (
    BATCH_MAX_BODY_BYTES,
    DEFAULT_MAX_BODY_BYTES,
    JOB_MAX_BODY_BYTES,
    KIB,
)
from jobs_gateway.api.limits import body_limits
from jobs_gateway.settings import Settings

pytestmark = pytest.mark.unit


def test_each_route_has_its_limit_and_fits_the_backends() -> None:
    limits = body_limits(Settings(environment="development"))
    for path in ("/auth/login", "/auth/register", "/auth/refresh"):
        assert limits.for_path(path) == 4 * KIB
    # the submission's and the dashboard's defaults for the routes these are forwarded to
    assert limits.for_path("/api/jobs") >= JOB_MAX_BODY_BYTES
    assert limits.for_path("/api/batches") >= BATCH_MAX_BODY_BYTES
    assert limits.for_path("/api/dead-letters/6f1c/requeue") >= JOB_MAX_BODY_BYTES
    assert limits.for_path("/api/schedules") >= JOB_MAX_BODY_BYTES
    assert limits.for_path("/api/schedules/6f1c") >= JOB_MAX_BODY_BYTES  # an edit's template
    assert limits.for_path("/api/jobs/6f1c/cancel") >= DEFAULT_MAX_BODY_BYTES
    assert limits.for_path("/api/dead-letters/bulk") >= DEFAULT_MAX_BODY_BYTES


def test_limits_follow_the_settings() -> None:
    settings = Settings(
        environment="development",
        max_body_bytes=10,
        max_auth_body_bytes=20,
        max_job_body_bytes=30,
        max_batch_body_bytes=40,
    )
    limits = body_limits(settings)
    paths = ("/x", "/auth/login", "/api/jobs", "/api/batches")
    assert [limits.for_path(path) for path in paths] == [10, 20, 30, 40]
