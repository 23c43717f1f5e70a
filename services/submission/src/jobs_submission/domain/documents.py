"""The ``submissions`` document (job + its outbox entry, written in one insert) and views of it.

Every field a query compares is an int (epoch milliseconds) or a string: the MongoDB stand-in
used in tests turns datetimes written by ``$set`` into strings (see DESIGN.md section 9).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from jobs_common.api_models import CamelModel
from jobs_common.contracts import JobSubmitted
from jobs_submission.domain.requests import JobRequest

STATUS_ACCEPTED = "accepted"
STATUS_PUBLISHED = "published"
OUTBOX_PENDING = "pending"
OUTBOX_SENT = "sent"

SubmissionStatus = Literal["accepted", "published"]


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def new_document(
    request: JobRequest,
    *,
    job_id: str,
    idempotency_key: str | None,
    trace_id: str,
    now: datetime,
) -> dict[str, Any]:
    """A fresh submission with its pending outbox entry: inserted in one atomic write."""
    now_ms = to_ms(now)
    return {
        "_id": job_id,
        "type": request.job_type,
        "priority": request.priority,
        "payload": request.payload,
        "submittedBy": request.submitted_by,
        "maxAttempts": request.max_attempts,
        "timeoutSeconds": request.timeout_seconds,
        "idempotencyKey": idempotency_key,
        "requestHash": request.request_hash(),
        "traceId": trace_id,
        "messageId": str(uuid.uuid4()),
        "createdAt": now,
        "createdAtMs": now_ms,
        "status": STATUS_ACCEPTED,
        "outbox": {
            "state": OUTBOX_PENDING,
            "attempts": 0,
            "nextAttemptAtMs": now_ms,
            "claimToken": None,
            "claimedUntilMs": 0,
            "lastError": None,
        },
    }


def job_submitted(document: dict[str, Any]) -> JobSubmitted:
    """The message for a stored submission; the same ``message_id`` on every republish."""
    return JobSubmitted(
        message_id=uuid.UUID(document["messageId"]),
        trace_id=document["traceId"],
        job_id=uuid.UUID(document["_id"]),
        job_type=document["type"],
        priority=document["priority"],
        payload=document["payload"],
        submitted_by=document["submittedBy"],
        max_attempts=document.get("maxAttempts"),
        timeout_seconds=document.get("timeoutSeconds"),
        submitted_at=from_ms(document["createdAtMs"]),
    )


class JobAccepted(CamelModel):
    job_id: str
    status: SubmissionStatus = "accepted"


class SubmissionPublic(CamelModel):
    """``GET /api/v1/jobs/{id}/status``: the submission record, not the job's run state."""

    job_id: str
    type: str
    priority: int
    submitted_by: str
    status: SubmissionStatus
    created_at: datetime
    published_at: datetime | None
    idempotency_key: str | None


def public_view(document: dict[str, Any]) -> SubmissionPublic:
    published_ms = document.get("publishedAtMs")
    return SubmissionPublic(
        job_id=document["_id"],
        type=document["type"],
        priority=document["priority"],
        submitted_by=document["submittedBy"],
        status=document["status"],
        created_at=from_ms(document["createdAtMs"]),
        published_at=from_ms(int(published_ms)) if published_ms is not None else None,
        idempotency_key=document.get("idempotencyKey"),
    )
