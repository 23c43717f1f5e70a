"""What accepting jobs checks and whom it tells, the same for one job (``submissions.py``)
and a batch (``batches.py``): the email rules and quotas, the job types the registry knows,
the clock, and, once accepted, the relay (woken, or handed the jobs in memory)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from jobs_common.contracts import utcnow
from jobs_submission.adapters.quota import QuotaStore
from jobs_submission.app.handoff import HandOff
from jobs_submission.domain.job_types import TypeSource
from jobs_submission.domain.quota import EmailPolicy


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
