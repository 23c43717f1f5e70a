"""A project's quotas at submission (docs/flow-control.md, "Quotas"): at most
``maxWaiting`` of its jobs waiting (unfinished, not running) and at most
``maxSubmittedPerDay`` submitted per UTC day. A submission past either is refused whole (a
batch too) with ``429 too_many_requests`` and ``Retry-After``; nothing of it is stored.

The waiting count is the scheduler's, read at most once a second per project and raised here
by what this replica accepted since, so a burst overshoots by at most what other replicas
accept within that second. The day's count is exact: a counter document per (project, day)
taken with the insert (``adapters/quota.py``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from jobs_submission.domain.quota import QuotaExceeded, QuotaWindow

DAY_MS = 86_400_000
# A project at its waiting quota: try again after this long (its jobs take their time).
WAITING_RETRY_AFTER_SECONDS = 5


@dataclass
class ProjectQuota:
    """A project's quotas, and its jobs waiting as last read (None: not counted)."""

    project_id: uuid.UUID
    max_waiting: int | None
    max_submitted_per_day: int | None
    waiting: int | None = None

    @property
    def any(self) -> bool:
        return self.max_waiting is not None or self.max_submitted_per_day is not None

    def waiting_refusal(self, amount: int) -> QuotaExceeded | None:
        """The refusal of ``amount`` more jobs past ``maxWaiting``; None: they fit."""
        if self.max_waiting is None or self.waiting is None:
            return None
        if self.waiting + amount <= self.max_waiting:
            return None
        return QuotaExceeded(
            f"project quota reached: at most {self.max_waiting} jobs waiting in project "
            f"{self.project_id}, {self.waiting} now; this submission has {amount}",
            retry_after=WAITING_RETRY_AFTER_SECONDS,
            reason="max_waiting",
        )

    def day_window(self, amount: int, *, now_ms: int) -> QuotaWindow | None:
        """The project's counter of the UTC day holding ``now_ms``; None: no daily quota."""
        if self.max_submitted_per_day is None:
            return None
        return QuotaWindow.holding(
            now_ms,
            length_ms=DAY_MS,
            counter=f"project-day:{self.project_id}",
            limit=self.max_submitted_per_day,
            amount=amount,
            message=f"project quota reached: at most {self.max_submitted_per_day} jobs "
            f"submitted per day (UTC) in project {self.project_id}; this submission has "
            f"{amount}",
            reason="max_submitted_per_day",
        )
