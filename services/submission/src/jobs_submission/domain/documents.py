"""The ``submissions`` document (job + its outbox entry, written in one insert) and views of it.

Every field a query compares is an int (epoch milliseconds) or a string: the MongoDB stand-in
used in tests turns datetimes written by ``$set`` into strings (see DESIGN.md section 9).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from jobs_common.api_models import CamelModel
from jobs_common.contracts import DEFAULT_PRIORITY, JobSubmitted, RetryPolicySpec
from jobs_common.tenancy import personal_project_id
from jobs_submission.domain.idempotency import key_fields, key_of
from jobs_submission.domain.projects import project_of
from jobs_submission.domain.requests import JobRequest
from jobs_submission.domain.times import from_ms, to_ms

STATUS_ACCEPTED = "accepted"
STATUS_PUBLISHED = "published"
# A member of a batch that was abandoned while it was being stored: never relayed, unless a
# replay with the batch's Idempotency-Key reopens it (app/batches.py, app/batch_gate.py).
OUTBOX_HELD = "held"
OUTBOX_PENDING = "pending"
OUTBOX_SENT = "sent"

SubmissionStatus = Literal["accepted", "published"]


def new_document(
    request: JobRequest,
    *,
    job_id: str,
    idempotency_key: str | None,
    trace_id: str,
    now: datetime,
    depends_on: list[str] | None = None,
    batch: tuple[str, int] | None = None,
    outbox_state: str = OUTBOX_PENDING,
    claim: tuple[str, int] | None = None,
) -> dict[str, Any]:
    """A fresh submission with its outbox entry: inserted in one atomic write.

    ``depends_on`` are the parents as job ids (a batch resolves its refs first; default: the
    request's); ``batch`` is ``(batch_id, batch_size)`` for a batch member; ``claim`` is
    ``(claimToken, claimedUntilMs)`` when the entry goes to the relay in memory
    (:mod:`jobs_submission.app.handoff`).
    """
    now_ms = to_ms(now)
    run_at = request.first_run_at(now)
    project = request.project_id or str(personal_project_id(request.submitted_by))
    return {
        "_id": job_id,
        "type": request.job_type,
        "priority": request.priority,
        "payload": request.payload,
        "submittedBy": request.submitted_by,
        "projectId": project,
        "apiKey": request.api_key,
        "maxAttempts": request.max_attempts,
        "timeoutSeconds": request.timeout_seconds,
        "timeoutDefault": request.timeout_default,
        "queue": request.queue,
        **key_fields(idempotency_key, owner=request.submitted_by, project=project),
        "requestHash": request.request_hash(),
        "traceId": trace_id,
        "messageId": str(uuid.uuid4()),
        "createdAt": now,
        "createdAtMs": now_ms,
        "runAtMs": None if run_at is None else to_ms(run_at),
        "delaySeconds": request.delay_seconds,
        "retryPolicy": request.retry_policy_json(),
        "retryPolicyName": request.retry_policy_name,
        "dependsOn": list(request.depends_on) if depends_on is None else depends_on,
        "ref": request.ref,
        "batchId": None if batch is None else batch[0],
        "batchSize": None if batch is None else batch[1],
        "status": STATUS_ACCEPTED,
        "outbox": {
            "state": outbox_state,
            "attempts": 0,
            "nextAttemptAtMs": now_ms,
            "claimToken": None if claim is None else claim[0],
            "claimedUntilMs": 0 if claim is None else claim[1],
            "lastError": None,
        },
    }


def job_submitted(document: dict[str, Any]) -> JobSubmitted:
    """The message for a stored submission; the same ``message_id`` on every republish.

    Documents stored before the scheduling fields existed lack them: read with defaults.
    """
    run_at_ms = document.get("runAtMs")
    policy = document.get("retryPolicy")
    batch_id = document.get("batchId")
    return JobSubmitted(
        message_id=uuid.UUID(document["messageId"]),
        trace_id=document["traceId"],
        job_id=uuid.UUID(document["_id"]),
        job_type=document["type"],
        priority=document["priority"] or DEFAULT_PRIORITY,
        priority_default=document["priority"] is None,
        payload=document["payload"],
        submitted_by=document["submittedBy"],
        max_attempts=document.get("maxAttempts"),
        timeout_seconds=document.get("timeoutSeconds"),
        timeout_default=bool(document.get("timeoutDefault")),
        submitted_at=from_ms(document["createdAtMs"]),
        run_at=None if run_at_ms is None else from_ms(int(run_at_ms)),
        retry_policy=None if policy is None else RetryPolicySpec.model_validate(policy),
        retry_policy_name=document.get("retryPolicyName"),
        depends_on=[uuid.UUID(parent) for parent in document.get("dependsOn") or ()],
        batch_id=None if batch_id is None else uuid.UUID(batch_id),
        batch_size=document.get("batchSize"),
        queue=document.get("queue") or "default",
        project_id=uuid.UUID(project_of(document)),
        api_key=document.get("apiKey"),
        # A batch member's ref: its children in the batch read its result by it.
        ref=document.get("ref") if batch_id is not None else None,
    )


class JobAccepted(CamelModel):
    job_id: str
    status: SubmissionStatus = "accepted"
    # The Idempotency-Key the service applied, null without one: a client whose key never
    # arrived (a shell substitution that failed, a proxy that dropped it) sees it here.
    idempotency_key: str | None = None


class SubmissionPublic(CamelModel):
    """``GET /api/v1/jobs/{jobId}/status``: the submission record, not the job's run state."""

    job_id: str
    type: str
    priority: int | None = Field(
        description="As submitted; null: none named, the job takes its queue's default."
    )
    submitted_by: str
    status: SubmissionStatus
    created_at: datetime
    published_at: datetime | None
    idempotency_key: str | None
    run_at: datetime | None = None
    depends_on: list[str] = []
    batch_id: str | None = None
    project_id: str


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
        idempotency_key=key_of(document),
        run_at=from_ms(int(document["runAtMs"])) if document.get("runAtMs") is not None else None,
        depends_on=list(document.get("dependsOn") or ()),
        batch_id=document.get("batchId"),
        project_id=project_of(document),
    )


BATCH_PENDING = "pending"  # members may be incomplete: no relay publishes them
BATCH_ACCEPTED = "accepted"  # every member stored: relays may publish them


def new_batch_document(
    *,
    batch_id: str,
    submitted_by: str,
    project_id: str,
    name: str | None,
    job_ids: list[str],
    idempotency_key: str | None,
    request_hash: str,
    trace_id: str,
    now: datetime,
) -> dict[str, Any]:
    """The ``batches`` document, written first with state ``pending`` (see docs)."""
    return {
        "_id": batch_id,
        "submittedBy": submitted_by,
        "projectId": project_id,
        "name": name,
        "size": len(job_ids),
        "jobIds": job_ids,
        "createdAt": now,
        "createdAtMs": to_ms(now),
        **key_fields(idempotency_key, owner=submitted_by, project=project_id),
        "requestHash": request_hash,
        "traceId": trace_id,
        "state": BATCH_PENDING,
    }


class BatchAccepted(CamelModel):
    batch_id: str
    job_ids: list[str]
    status: Literal["accepted"] = "accepted"
    idempotency_key: str | None = None  # as JobAccepted's


class BatchStatusPublic(CamelModel):
    """``GET /api/v1/batches/{batchId}/status``: the batch as stored here, not its members' runs."""

    batch_id: str
    name: str | None
    size: int
    job_ids: list[str]
    published: int
    created_at: datetime
    project_id: str


def batch_view(document: dict[str, Any], *, published: int) -> BatchStatusPublic:
    return BatchStatusPublic(
        batch_id=document["_id"],
        name=document.get("name"),
        size=int(document["size"]),
        job_ids=list(document["jobIds"]),
        published=published,
        created_at=from_ms(int(document["createdAtMs"])),
        project_id=project_of(document),
    )
