"""How many jobs of a project are not finished, asked of the dashboard (the job store's
reader) over HTTP: a project with unfinished jobs is not deleted (docs/tenancy.md)."""

from __future__ import annotations

import uuid

import orjson

from jobs_common.auth import Identity
from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_common.errors import UpstreamUnavailable
from jobs_gateway.adapters.upstream import Upstreams

UNFINISHED = ",".join(s.value for s in JobStatus if s not in TERMINAL_STATUSES)
# Who asks: the gateway itself, reading as the platform admin reads (every project).
GATEWAY = Identity(user_id="gateway", email="gateway@jobs.internal", role="admin")


class ProjectJobs:
    def __init__(self, upstreams: Upstreams, *, internal_token: str) -> None:
        self.upstreams = upstreams
        self.internal_token = internal_token

    async def unfinished(self, project_id: uuid.UUID, *, request_id: str) -> int:
        """The number of the project's jobs in a status that is not terminal; 503 when the
        dashboard cannot say."""
        answer = await self.upstreams.forward(
            upstream="dashboard",
            method="GET",
            path="/api/jobs",
            query=f"projectId={project_id}&status={UNFINISHED}&pageSize=1",
            headers=GATEWAY.headers(self.internal_token),
            body=b"",
            request_id=request_id,
        )
        try:
            total = (
                orjson.loads(answer.content)["totalItems"] if answer.status_code == 200 else None
            )
        except (orjson.JSONDecodeError, KeyError, TypeError):
            total = None
        if not isinstance(total, int):
            raise UpstreamUnavailable(
                "cannot tell whether the project has unfinished jobs; retry the delete"
            )
        return total
