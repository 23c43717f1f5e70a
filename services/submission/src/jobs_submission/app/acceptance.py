"""What accepting jobs checks and whom it tells, the same for one job (``submissions.py``)
and a batch (``batches.py``): the email rules and quotas, the job types the registry knows,
the clock, and, once accepted, the relay (woken, or handed the jobs in memory)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from jobs_common.auth import Identity
from jobs_common.contracts import utcnow
from jobs_submission.adapters.project_quotas import ProjectQuotas
from jobs_submission.adapters.quota import QuotaStore
from jobs_submission.app.handoff import HandOff
from jobs_submission.domain.job_types import TypeSource
from jobs_submission.domain.project_quotas import ProjectQuota
from jobs_submission.domain.quota import EmailPolicy, QuotaWindow


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Acceptance:
    on_accepted: Callable[[], None] = _nothing
    handoff: HandOff | None = None
    clock: Callable[[], datetime] = utcnow
    quotas: QuotaStore | None = None
    email: EmailPolicy = field(default_factory=EmailPolicy)
    types: TypeSource | None = None
    project_quotas: ProjectQuotas | None = None

    async def project_quota(
        self, identity: Identity, project_id: str | None
    ) -> ProjectQuota | None:
        """The quotas of the project a submission goes to (None: none, or none known)."""
        if self.project_quotas is None or project_id is None:
            return None
        return await self.project_quotas.of(identity, uuid.UUID(project_id))

    def quota_windows(
        self, email: QuotaWindow | None, quota: ProjectQuota | None, amount: int, now_ms: int
    ) -> list[QuotaWindow]:
        """The counters a submission of ``amount`` jobs is taken from, with its insert; raises
        the refusal of a project's waiting quota first."""
        day = None
        if quota is not None:
            if (refusal := quota.waiting_refusal(amount)) is not None:
                raise refusal
            day = quota.day_window(amount, now_ms=now_ms)
        return [window for window in (email, day) if window is not None]

    def accepted(self, quota: ProjectQuota | None, amount: int) -> None:
        if quota is not None and self.project_quotas is not None:
            self.project_quotas.accepted(quota.project_id, amount)
