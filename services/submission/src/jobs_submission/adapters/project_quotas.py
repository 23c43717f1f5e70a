"""A project's quotas as the scheduler, which owns them and counts the project's waiting jobs,
says (``GET /internal/v1/projects/{projectId}/quota``, with the caller's identity), kept per
project for ``refresh`` seconds (``idle_refresh`` for a project without a waiting quota: a
quota set takes effect within that).

A scheduler that does not answer leaves a project's quotas unknown for that long: its
submissions are accepted (counted ``submission_project_quota_unknown_total``), as accepting
jobs must not wait for the scheduler."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence

import httpx

from jobs_common.auth import Identity
from jobs_common.project_flow import ProjectQuota as QuotaAnswer
from jobs_common.project_flow import project_quota_path
from jobs_submission.adapters import metrics
from jobs_submission.domain.project_quotas import ProjectQuota

log = logging.getLogger(__name__)


class ProjectQuotas:
    def __init__(
        self,
        client: httpx.AsyncClient,
        urls: Sequence[str],
        *,
        internal_token: str,
        refresh: float = 1.0,
        idle_refresh: float = 5.0,
    ) -> None:
        self.client = client
        self.urls = [url.rstrip("/") for url in urls]
        self.internal_token = internal_token
        self.refresh = refresh
        self.idle_refresh = idle_refresh
        self._known: dict[uuid.UUID, tuple[float, ProjectQuota | None]] = {}

    async def of(self, identity: Identity, project_id: uuid.UUID) -> ProjectQuota | None:
        """The project's quotas (None: none known), waiting raised by what was accepted here
        since the read."""
        now = time.monotonic()
        known = self._known.get(project_id)
        if known is not None and now < known[0]:
            return known[1]
        quota = await self._read(identity, project_id)
        counted = quota is not None and quota.max_waiting is not None
        due = self.refresh if counted else self.idle_refresh
        self._known[project_id] = (now + due, quota)
        return quota

    def accepted(self, project_id: uuid.UUID, amount: int) -> None:
        """``amount`` more of the project's jobs wait (until the next read says)."""
        known = self._known.get(project_id)
        if known is not None and known[1] is not None and known[1].waiting is not None:
            known[1].waiting += amount

    async def _read(self, identity: Identity, project_id: uuid.UUID) -> ProjectQuota | None:
        path = project_quota_path(project_id)
        headers = identity.headers(self.internal_token)
        for url in self.urls:
            try:
                answer = await self.client.get(url + path, headers=headers)
            except httpx.HTTPError:
                continue
            if answer.status_code != 200:
                break
            read = QuotaAnswer.model_validate(answer.json())
            quota = ProjectQuota(
                project_id, read.max_waiting, read.max_submitted_per_day, read.waiting
            )
            return quota if quota.any else None
        metrics.PROJECT_QUOTA_UNKNOWN.inc()
        log.warning(
            "a project's quotas are unknown: its submissions are accepted",
            extra={"action": "project_quota_unknown", "project_id": str(project_id)},
        )
        return None
