"""What the dashboard answers a plain user about their own jobs (pure).

Visibility (``domain/query.py``) decides whose jobs a caller reads; this decides what of them:
an admin reads everything; a user reads their own jobs without worker internals (worker ids
embed the host name and pid: ``workerId`` fields are null, the texts say "a worker") and
without other people's emails (an admin who cancelled, retried or discarded: "an
administrator"). The text rule is :mod:`jobs_common.disclosure`, shared with the gateway's live
events.
"""

from __future__ import annotations

from collections.abc import Iterable

from jobs_common.auth import Identity
from jobs_common.disclosure import fingerprint_for_owner, for_owner, person_for_owner
from jobs_common.retry_policy_commands import RetryPolicyView
from jobs_dashboard.domain.dead_letters import DeadLetterGroup, DeadLetterItem
from jobs_dashboard.domain.models import AttemptError, JobDetail, JobSummary, LogLine


def _text(text: str | None, owner: str, worker_ids: Iterable[str | None] = ()) -> str | None:
    return None if text is None else for_owner(text, owner=owner, worker_ids=worker_ids)


def _error(
    error: AttemptError | None, owner: str, worker_ids: Iterable[str | None] = ()
) -> AttemptError | None:
    if error is None:
        return None
    return error.model_copy(update={"message": _text(error.message, owner, worker_ids)})


def job_detail_for(detail: JobDetail, identity: Identity) -> JobDetail:
    if identity.is_admin:
        return detail
    owner = identity.email
    workers = [detail.worker_id, *(attempt.worker_id for attempt in detail.attempts)]
    return detail.model_copy(
        update={
            "worker_id": None,
            "last_error": _text(detail.last_error, owner, workers),
            "latest_error": _error(detail.latest_error, owner, workers),
            "cancel_requested_by": person_for_owner(detail.cancel_requested_by, owner=owner),
            "attempts": [
                attempt.model_copy(
                    update={"worker_id": None, "error": _text(attempt.error, owner, workers)}
                )
                for attempt in detail.attempts
            ],
            "timeline": [
                entry.model_copy(
                    update={"reason": for_owner(entry.reason, owner=owner, worker_ids=workers)}
                )
                for entry in detail.timeline
            ],
            "dead_letter": None
            if detail.dead_letter is None
            else detail.dead_letter.model_copy(
                update={
                    "reason": for_owner(detail.dead_letter.reason, owner=owner),
                    "last_error": _text(detail.dead_letter.last_error, owner, workers),
                }
            ),
        }
    )


def job_summaries_for(items: list[JobSummary], identity: Identity) -> list[JobSummary]:
    if identity.is_admin:
        return items
    return [
        item.model_copy(
            update={
                "last_error": _text(item.last_error, identity.email),
                "latest_error": _error(item.latest_error, identity.email),
            }
        )
        for item in items
    ]


def log_lines_for(lines: list[LogLine], identity: Identity) -> list[LogLine]:
    """Lines keep their text (the worker ships messages, not tracebacks or paths); the
    worker that wrote them is not named."""
    if identity.is_admin:
        return lines
    return [line.model_copy(update={"worker_id": None}) for line in lines]


def dead_letter_for(item: DeadLetterItem, identity: Identity) -> DeadLetterItem:
    if identity.is_admin:
        return item
    owner = identity.email
    return item.model_copy(
        update={
            "reason": for_owner(item.reason, owner=owner),
            "last_error": _text(item.last_error, owner),
            "fingerprint": fingerprint_for_owner(item.fingerprint),
            "resolved_by": person_for_owner(item.resolved_by, owner=owner),
        }
    )


def dead_letters_for(items: list[DeadLetterItem], identity: Identity) -> list[DeadLetterItem]:
    return [dead_letter_for(item, identity) for item in items]


def groups_for(groups: list[DeadLetterGroup], identity: Identity) -> list[DeadLetterGroup]:
    """Groups of a user's letters are formed on the fingerprint the user reads already (the
    adapter groups on it); the sample error is the newest error, as the user reads it."""
    if identity.is_admin:
        return groups
    owner = identity.email
    return [
        group.model_copy(
            update={
                "fingerprint": fingerprint_for_owner(group.fingerprint),
                "reasons": [for_owner(reason, owner=owner) for reason in group.reasons],
                "sample_error": _text(group.sample_error, owner),
            }
        )
        for group in groups
    ]


def policies_for(items: list[RetryPolicyView], identity: Identity) -> list[RetryPolicyView]:
    """Retry policies as a user reads them: who created one is "an administrator"."""
    if identity.is_admin:
        return items
    owner = identity.email
    return [
        item.model_copy(update={"created_by": person_for_owner(item.created_by, owner=owner) or ""})
        for item in items
    ]
