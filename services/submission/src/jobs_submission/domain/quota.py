"""Email quotas and the recipient allow-list at submission (pure).

A user may submit at most ``SUBMISSION_EMAIL_QUOTA`` email jobs per fixed window of
``SUBMISSION_EMAIL_QUOTA_WINDOW_SECONDS`` (windows aligned on the epoch, so every replica agrees
on them). Single submissions and batch members count alike; idempotent replays do not. The
count lives in one counter document per (caller, window) (``adapters/quota.py``). Admins are
exempt unless ``SUBMISSION_EMAIL_QUOTA_EXEMPT_ADMINS`` is false; 0 turns the quota off.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, TooManyRequests
from jobs_common.recipients import NOT_ALLOWED, RecipientAllowList
from jobs_submission.domain.requests import JobRequest, normalize_owner

EMAIL = "email"


@dataclass(frozen=True)
class EmailQuota:
    """The configured quota: ``limit`` email jobs per ``window_seconds`` (0: no quota)."""

    limit: int
    window_seconds: int
    exempt_admins: bool = True

    def applies_to(self, identity: Identity) -> bool:
        return self.limit > 0 and not (self.exempt_admins and identity.is_admin)

    def window(self, identity: Identity, *, amount: int, now_ms: int) -> QuotaWindow:
        """The window holding ``now_ms`` and the caller's counter key in it."""
        return QuotaWindow.holding(
            now_ms,
            length_ms=self.window_seconds * 1000,
            counter=f"email:{normalize_owner(identity.email)}",
            limit=self.limit,
            amount=amount,
        )


@dataclass(frozen=True)
class QuotaWindow:
    """One caller's counter in one window, and how much a submission adds to it."""

    key: str  # the counter document's _id
    limit: int
    amount: int
    start_ms: int
    end_ms: int
    now_ms: int
    # What a refusal says (None: the email quota's sentence), and which quota it is.
    message: str | None = None
    reason: str | None = None

    @classmethod
    def holding(
        cls,
        now_ms: int,
        *,
        length_ms: int,
        counter: str,
        limit: int,
        amount: int,
        message: str | None = None,
        reason: str | None = None,
    ) -> QuotaWindow:
        """The window of ``length_ms`` (aligned on the epoch, so every replica agrees on it)
        holding ``now_ms``, its counter document ``counter:<window start>``."""
        start = now_ms - now_ms % length_ms
        return cls(
            key=f"{counter}:{start}",
            limit=limit,
            amount=amount,
            start_ms=start,
            end_ms=start + length_ms,
            now_ms=now_ms,
            message=message,
            reason=reason,
        )

    def exceeded(self, count: int) -> bool:
        """``count`` is the counter after this submission's ``amount`` was added."""
        return count > self.limit

    def retry_after_seconds(self) -> int:
        """Whole seconds until the window ends (at least 1)."""
        return max(1, -(-(self.end_ms - self.now_ms) // 1000))

    def refusal(self) -> QuotaExceeded:
        window = self.end_ms - self.start_ms
        return QuotaExceeded(
            self.message
            or f"email quota reached: at most {self.limit} email jobs per {window // 1000} s "
            f"per user; this submission has {self.amount}",
            retry_after=self.retry_after_seconds(),
            reason=self.reason,
        )


class QuotaExceeded(TooManyRequests):
    """429 in the error envelope, with ``Retry-After`` (the end of the current window);
    ``reason`` names a project's quota (``jobs_throttled_total{reason}``), None the email
    quota."""

    def __init__(self, message: str, *, retry_after: int, reason: str | None = None) -> None:
        super().__init__(message, retry_after=retry_after)
        self.reason = reason


def email_count(requests: Iterable[JobRequest]) -> int:
    return sum(1 for request in requests if request.job_type == EMAIL)


def refused_recipients(
    requests: Iterable[tuple[str, JobRequest]], allowed: RecipientAllowList
) -> list[ErrorDetail]:
    """A 422 detail (``<prefix>payload.to``) per email job whose recipient is not allowed;
    ``requests`` pairs each job with its field prefix (``""``, ``"jobs.3."``)."""
    if not allowed.restricts:
        return []
    return [
        ErrorDetail(field=f"{prefix}payload.to", message=NOT_ALLOWED)
        for prefix, request in requests
        if request.job_type == EMAIL and not allowed.allows(str(request.payload.get("to", "")))
    ]


@dataclass(frozen=True)
class EmailPolicy:
    """What a submission service enforces on email jobs: the quota and the allow-list."""

    quota: EmailQuota = EmailQuota(limit=0, window_seconds=3600)
    allowed: RecipientAllowList = field(default_factory=lambda: RecipientAllowList.of(()))

    def window(
        self, identity: Identity, requests: Iterable[JobRequest], *, now_ms: int
    ) -> QuotaWindow | None:
        """The caller's counter to add the submission's email jobs to; None when nothing
        counts (no email job, no quota, an exempt admin)."""
        amount = email_count(requests)
        if amount == 0 or not self.quota.applies_to(identity):
            return None
        return self.quota.window(identity, amount=amount, now_ms=now_ms)
