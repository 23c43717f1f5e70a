"""A schedule created or updated by name (``PUT /api/schedules/by-name/{name}``) as a
:class:`~jobs_client.exchange.Call`, built like those of :mod:`jobs_client.calls`: a deploy
script may send it every time, so it is safe to send again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jobs_client.calls import _id, _policy, payload_json
from jobs_client.exchange import Call
from jobs_client.models import Payload, RetryPolicy, Schedule
from jobs_client.tasks import Task


def upsert_schedule(
    *,
    name: str,
    job_type: str | Task[Any, Any],
    payload: Payload,
    cron: str,
    timezone: str,
    priority: int,
    max_attempts: int | None,
    timeout_seconds: int | None,
    retry_policy: RetryPolicy | Mapping[str, Any] | str | None,
) -> Call[Schedule]:
    template: dict[str, Any] = {
        "type": job_type.name if isinstance(job_type, Task) else job_type,
        "priority": priority,
        "payload": payload_json(payload),
    }
    if max_attempts is not None:
        template["maxAttempts"] = max_attempts
    if timeout_seconds is not None:
        template["timeoutSeconds"] = timeout_seconds
    if isinstance(retry_policy, str):
        template["retryPolicyName"] = retry_policy
    elif retry_policy is not None:
        template["retryPolicy"] = _policy(retry_policy)
    return Call(
        "PUT",
        f"/api/schedules/by-name/{_id(name)}",
        lambda r: Schedule.from_json(r.json()),
        body={"cron": cron, "timezone": timezone, "jobTemplate": template},
        replay_safe=True,
    )
