"""Every operation of the public API as a :class:`~jobs_client.exchange.Call`: the request
(paths, camelCase bodies and query parameters of ``/openapi.json``) and the reading of its
answer. Both clients build their calls here, so the two can never disagree on the wire.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx

from jobs_client.exchange import Call
from jobs_client.models import (
    BatchSubmitted,
    CommandAccepted,
    DeadLetter,
    Job,
    JobSpec,
    JobType,
    LogLine,
    Page,
    Payload,
    RequeueAccepted,
    RetryPolicy,
    Schedule,
    Submitted,
    parse_page,
)
from jobs_client.models import (
    Delay as Delay,
)

Params = tuple[tuple[str, str], ...]

MAX_PAGE_SIZE = 100
MAX_LOG_LIMIT = 500


def _id(value: str) -> str:
    """A path segment: ids are uuids, anything else is quoted (the API answers 422)."""
    return quote(str(value), safe="")


def _params(**values: Any) -> Params:
    """Query parameters with camelCase names; None left out, lists repeated, datetimes ISO."""
    out: list[tuple[str, str]] = []
    for name, value in values.items():
        if value is None:
            continue
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if isinstance(item, datetime):
                out.append((name, item.isoformat()))
            elif isinstance(item, bool):
                out.append((name, "true" if item else "false"))
            else:
                out.append((name, str(item)))
    return tuple(out)


def _seconds(delay: Delay) -> int:
    seconds = delay.total_seconds() if isinstance(delay, timedelta) else float(delay)
    return math.ceil(seconds)  # never earlier than asked


def _policy(policy: RetryPolicy | Mapping[str, Any] | str) -> Any:
    if isinstance(policy, RetryPolicy):
        return policy.to_json()
    if isinstance(policy, str):
        return policy
    return dict(policy)


def payload_json(payload: Payload) -> dict[str, Any]:
    """A payload as the API takes it: a mapping as it is, a pydantic model (anything with
    ``model_dump``) as its JSON by alias, nested models and all."""
    if isinstance(payload, Mapping):
        return dict(payload)
    dumped = payload.model_dump(mode="json", by_alias=True)
    if not isinstance(dumped, dict):
        raise TypeError(f"a payload is a JSON object, not {type(dumped).__name__}")
    return dumped


def job_body(
    *,
    type: str,
    payload: Payload,
    priority: int | None = None,
    run_at: datetime | str | None = None,
    delay: Delay | None = None,
    max_attempts: int | None = None,
    timeout_seconds: int | None = None,
    retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
    depends_on: Sequence[str] | None = None,
    submitted_by: str | None = None,
    ref: str | None = None,
    queue: str | None = None,
) -> dict[str, Any]:
    """A job spec as ``POST /api/jobs`` (and each entry of ``POST /api/batches``) takes it.
    Only what is given is sent: the server's defaults apply to the rest, and it validates
    everything (a naive ``run_at`` is its 422 on ``runAt``; no ``priority``: its queue's
    default priority, else 2)."""
    body: dict[str, Any] = {"type": type, "payload": payload_json(payload)}
    if priority is not None:
        body["priority"] = priority
    if run_at is not None:
        body["runAt"] = run_at.isoformat() if isinstance(run_at, datetime) else run_at
    if delay is not None:
        body["delaySeconds"] = _seconds(delay)
    if max_attempts is not None:
        body["maxAttempts"] = max_attempts
    if timeout_seconds is not None:
        body["timeoutSeconds"] = timeout_seconds
    if retry_policy is not None:
        body["retryPolicy"] = _policy(retry_policy)
    if depends_on is not None:
        body["dependsOn"] = [str(x) for x in depends_on]
    if submitted_by is not None:
        body["submittedBy"] = submitted_by
    if ref is not None:
        body["ref"] = ref
    if queue is not None:
        body["queue"] = queue
    return body


def _replayed(response: httpx.Response) -> bool:
    return str(response.headers.get("idempotent-replayed", "")).lower() == "true"


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def submit(body: dict[str, Any], idempotency_key: str | None) -> Call[Submitted]:
    key = idempotency_key or new_idempotency_key()

    def parse(response: httpx.Response) -> Submitted:
        answer = response.json()
        return Submitted(
            job_id=str(answer["jobId"]),
            status=str(answer.get("status", "accepted")),
            idempotency_key=key,
            replayed=_replayed(response),
        )

    # The key is fixed here, once: every retry of this call sends the same one.
    return Call(
        "POST", "/api/jobs", parse, body=body, headers={"Idempotency-Key": key}, replay_safe=True
    )


def spec_body(spec: JobSpec | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(spec, JobSpec):
        return job_body(
            type=spec.type,
            payload=spec.payload,
            priority=spec.priority,
            run_at=spec.run_at,
            delay=spec.delay,
            max_attempts=spec.max_attempts,
            timeout_seconds=spec.timeout_seconds,
            retry_policy=spec.retry_policy,
            depends_on=spec.depends_on,
            ref=spec.ref,
            queue=spec.queue,
        )
    return dict(spec)  # already the wire shape (camelCase)


def submit_batch(
    jobs: Iterable[JobSpec | Mapping[str, Any]],
    *,
    name: str | None,
    submitted_by: str | None,
    idempotency_key: str | None,
) -> Call[BatchSubmitted]:
    key = idempotency_key or new_idempotency_key()
    body: dict[str, Any] = {"jobs": [spec_body(spec) for spec in jobs]}
    if name is not None:
        body["name"] = name
    if submitted_by is not None:
        body["submittedBy"] = submitted_by

    def parse(response: httpx.Response) -> BatchSubmitted:
        answer = response.json()
        return BatchSubmitted(
            batch_id=str(answer["batchId"]),
            job_ids=[str(x) for x in answer["jobIds"]],
            status=str(answer.get("status", "accepted")),
            idempotency_key=key,
            replayed=_replayed(response),
        )

    return Call(
        "POST",
        "/api/batches",
        parse,
        body=body,
        headers={"Idempotency-Key": key},
        replay_safe=True,
    )


def get_job(job_id: str) -> Call[Job]:
    return Call(
        "GET", f"/api/jobs/{_id(job_id)}", lambda r: Job.from_json(r.json()), replay_safe=True
    )


def submission_status(job_id: str) -> Call[dict[str, Any]]:
    """The submission's record (``GET /api/jobs/{id}/status``): there as soon as the job is
    accepted, before the scheduler has recorded it for ``GET /api/jobs/{id}``."""
    return Call(
        "GET", f"/api/jobs/{_id(job_id)}/status", lambda r: dict(r.json()), replay_safe=True
    )


def list_jobs(
    *,
    status: str | Sequence[str] | None = None,
    type: str | None = None,
    priority: int | None = None,
    schedule_id: str | None = None,
    batch_id: str | None = None,
    submitted_by: str | None = None,
    created_from: datetime | None = None,
    created_to: datetime | None = None,
    sort_by: str | None = None,
    sort_direction: str | None = None,
    page_number: int = 1,
    page_size: int = 20,
) -> Call[Page[Job]]:
    statuses = [status] if isinstance(status, str) else list(status) if status else None
    params = _params(
        status=statuses,
        type=type,
        priority=priority,
        scheduleId=schedule_id,
        batchId=batch_id,
        submittedBy=submitted_by,
        createdFrom=created_from,
        createdTo=created_to,
        sortBy=sort_by,
        sortDirection=sort_direction,
        pageNumber=page_number,
        pageSize=page_size,
    )
    return Call(
        "GET",
        "/api/jobs",
        lambda r: parse_page(r.json(), Job.from_json),
        params=params,
        replay_safe=True,
    )


def job_logs(job_id: str, *, after_id: int, limit: int) -> Call[tuple[list[LogLine], int]]:
    def parse(response: httpx.Response) -> tuple[list[LogLine], int]:
        body = response.json()
        return [LogLine.from_json(x) for x in body["items"]], int(body["nextAfterId"])

    return Call(
        "GET",
        f"/api/jobs/{_id(job_id)}/logs",
        parse,
        params=_params(afterId=after_id, limit=limit),
        replay_safe=True,
    )


def retry_job(job_id: str) -> Call[CommandAccepted]:
    return Call(
        "POST",
        f"/api/jobs/{_id(job_id)}/retry",
        lambda r: CommandAccepted.from_json(r.json()),
    )


def cancel_job(job_id: str, *, reason: str | None) -> Call[CommandAccepted]:
    return Call(
        "POST",
        f"/api/jobs/{_id(job_id)}/cancel",
        lambda r: CommandAccepted.from_json(r.json()),
        body={"reason": reason} if reason is not None else {},
    )


# --- schedules ----------------------------------------------------------------------------


def job_types() -> Call[tuple[JobType, ...]]:
    """Every job type a submission may name, with schema, queue, defaults, live workers."""
    return Call(
        "GET",
        "/api/job-types",
        lambda r: tuple(JobType.from_json(row) for row in r.json()["types"]),
        replay_safe=True,
    )


def list_schedules(*, page_number: int, page_size: int) -> Call[Page[Schedule]]:
    return Call(
        "GET",
        "/api/schedules",
        lambda r: parse_page(r.json(), Schedule.from_json),
        params=_params(pageNumber=page_number, pageSize=page_size),
        replay_safe=True,
    )


def get_schedule(schedule_id: str) -> Call[Schedule]:
    return Call(
        "GET",
        f"/api/schedules/{_id(schedule_id)}",
        lambda r: Schedule.from_json(r.json()),
        replay_safe=True,
    )


def create_schedule(
    *,
    name: str,
    cron: str,
    timezone: str,
    type: str,
    payload: Payload,
    priority: int,
    max_attempts: int | None,
    timeout_seconds: int | None,
    retry_policy: RetryPolicy | Mapping[str, Any] | str | None,
) -> Call[Schedule]:
    template: dict[str, Any] = {
        "type": type,
        "priority": priority,
        "payload": payload_json(payload),
    }
    if max_attempts is not None:
        template["maxAttempts"] = max_attempts
    if timeout_seconds is not None:
        template["timeoutSeconds"] = timeout_seconds
    if isinstance(retry_policy, str):
        template["retryPolicyName"] = retry_policy  # templates name a stored policy apart
    elif retry_policy is not None:
        template["retryPolicy"] = _policy(retry_policy)
    body = {"name": name, "cron": cron, "timezone": timezone, "jobTemplate": template}
    return Call("POST", "/api/schedules", lambda r: Schedule.from_json(r.json()), body=body)


def schedule_action(schedule_id: str, action: str) -> Call[Schedule]:
    """``pause`` or ``resume``: idempotent, so safe to send again."""
    return Call(
        "POST",
        f"/api/schedules/{_id(schedule_id)}/{action}",
        lambda r: Schedule.from_json(r.json()),
        replay_safe=True,
    )


def delete_schedule(schedule_id: str) -> Call[None]:
    return Call("DELETE", f"/api/schedules/{_id(schedule_id)}", lambda r: None)


# --- dead letters -------------------------------------------------------------------------


def list_dead_letters(
    *,
    status: str | None,
    reason: str | None,
    job_type: str | None,
    fingerprint: str | None,
    submitted_by: str | None,
    page_number: int,
    page_size: int,
) -> Call[Page[DeadLetter]]:
    return Call(
        "GET",
        "/api/dead-letters",
        lambda r: parse_page(r.json(), DeadLetter.from_json),
        params=_params(
            status=status,
            reason=reason,
            jobType=job_type,
            fingerprint=fingerprint,
            submittedBy=submitted_by,
            pageNumber=page_number,
            pageSize=page_size,
        ),
        replay_safe=True,
    )


def requeue_dead_letter(
    dead_letter_id: str, *, payload: Payload | None, reason: str | None
) -> Call[RequeueAccepted]:
    body: dict[str, Any] = {}
    if payload is not None:
        body["payload"] = payload_json(payload)
    if reason is not None:
        body["reason"] = reason
    return Call(
        "POST",
        f"/api/dead-letters/{_id(dead_letter_id)}/requeue",
        lambda r: RequeueAccepted.from_json(r.json()),
        body=body,
    )


def discard_dead_letter(dead_letter_id: str, *, reason: str | None) -> Call[DeadLetter]:
    return Call(
        "POST",
        f"/api/dead-letters/{_id(dead_letter_id)}/discard",
        lambda r: DeadLetter.from_json(r.json()),
        body={"reason": reason} if reason is not None else {},
    )
