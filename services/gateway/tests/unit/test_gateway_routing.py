"""The routing table: submission for a few routes, the dashboard for everything else."""

from __future__ import annotations

import pytest

from jobs_common.errors import BadRequest
from jobs_gateway.domain.routing import resolve

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("method", "path", "upstream", "target", "template"),
    [
        ("POST", "jobs", "submission", "/api/v1/jobs", "/api/jobs"),
        ("post", "jobs", "submission", "/api/v1/jobs", "/api/jobs"),
        (
            "GET",
            "jobs/j-1/status",
            "submission",
            "/api/v1/jobs/j-1/status",
            "/api/jobs/{jobId}/status",
        ),
        ("POST", "batches", "submission", "/api/v1/batches", "/api/batches"),
        (
            "GET",
            "batches/b%201/status",
            "submission",
            "/api/v1/batches/b%201/status",
            "/api/batches/{batchId}/status",
        ),
        ("GET", "jobs", "dashboard", "/api/jobs", "/api/{path}"),
        ("GET", "jobs/j-1", "dashboard", "/api/jobs/j-1", "/api/{path}"),
        ("GET", "jobs/analytics", "dashboard", "/api/jobs/analytics", "/api/{path}"),
        ("POST", "jobs/j-1/retry", "dashboard", "/api/jobs/j-1/retry", "/api/{path}"),
        ("POST", "jobs/j-1/status", "dashboard", "/api/jobs/j-1/status", "/api/{path}"),
        ("DELETE", "schedules/s-1", "dashboard", "/api/schedules/s-1", "/api/{path}"),
        ("GET", "batches/b-1", "dashboard", "/api/batches/b-1", "/api/{path}"),
        ("GET", "dead-letters", "dashboard", "/api/dead-letters", "/api/{path}"),
        ("GET", "jobs//status", "dashboard", "/api/jobs//status", "/api/{path}"),
    ],
)
def test_route_table(method: str, path: str, upstream: str, target: str, template: str) -> None:
    resolved = resolve(method, path)
    assert (resolved.upstream, resolved.path, resolved.template) == (upstream, target, template)


@pytest.mark.parametrize("path", ["../health", "jobs/../../admin", "jobs/%2e%2e/x", "jobs/a%2Fb"])
def test_path_traversal_is_refused(path: str) -> None:
    with pytest.raises(BadRequest):
        resolve("GET", path)
