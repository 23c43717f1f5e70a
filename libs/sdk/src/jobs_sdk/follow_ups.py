"""Jobs a handler enqueues (``ctx.submit``; docs/sdk.md, "Submitting from a handler"): what
a submission asks for, the protocol the worker implements, and the errors a handler sees.

Each follow-up carries an idempotency key derived from the running job's id and the call's
order within the attempt (or the caller's own ``key=``), so an attempt that runs again (a
retry, a redelivery) submits the same follow-ups again and gets the first answers back:
the follow-up is enqueued once.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from jobs_sdk.errors import FailPermanently, RetryLater

# What the submission service accepts as an Idempotency-Key (200 characters, printable).
MAX_KEY_LENGTH = 100
_KEY = re.compile(r"^[\x21-\x7e]{1,100}$")


class SubmitRefused(FailPermanently):
    """The submission service refused the follow-up (validation, forbidden, conflict: the
    same call made with another payload by an earlier attempt). Permanent if uncaught."""

    def __init__(self, message: str, *, status: int, error: str = "", details: Any = None):
        super().__init__(message)
        self.status = status
        self.error = error
        self.details = details


class SubmitUnavailable(RetryLater):
    """The follow-up could not be submitted now (service unreachable, throttled, or this
    worker is not configured to submit): the attempt is retried, the follow-up is not lost."""


@dataclass(frozen=True)
class FollowUp:
    """One ``ctx.submit`` call: the job to enqueue, and the running job it comes from."""

    job_type: str
    payload: dict[str, Any]
    key: str  # the Idempotency-Key, unique per running job
    from_job: uuid.UUID
    trace_id: str
    submitted_by: str | None
    project_id: uuid.UUID | None
    depends_on: tuple[str, ...] = ()
    delay_seconds: int | None = None
    priority: int | None = None
    queue: str | None = None


class Submitter(Protocol):
    """What submits follow-ups (the worker's: over HTTP to the submission service)."""

    async def submit(self, follow_up: FollowUp) -> uuid.UUID: ...

    def submit_blocking(self, follow_up: FollowUp) -> uuid.UUID:
        """For sync handlers, from their thread (never from the event loop's)."""
        ...


def follow_up_key(job_id: uuid.UUID, order: int, key: str | None) -> str:
    """The idempotency key of a running job's follow-up: its ``order``-th call, or ``key``."""
    if key is None:
        return f"follow-up:{job_id}:{order}"
    if not _KEY.match(key):
        raise ValueError(
            f"key= is 1 to {MAX_KEY_LENGTH} printable characters without spaces, not {key!r}"
        )
    return f"follow-up:{job_id}:key:{key}"
