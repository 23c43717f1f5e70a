"""``ctx.submit``: follow-up jobs submitted to the submission service (docs/sdk.md,
"Submitting from a handler"), over its API as the gateway calls it, with the internal token.

The identity sent is the running job's, from its dispatch (the scheduler's record): its
owner, acting in the job's project as a member. So a follow-up goes through the same
validation as any submission (payload schema, quotas, idempotency), and this worker never
submits as anyone but the owner of a job it runs. The Idempotency-Key is the follow-up's
(``jobs_sdk.follow_ups.follow_up_key``): a call made again by a retried attempt answers the
first job's id.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole
from jobs_sdk.follow_ups import FollowUp, SubmitRefused, SubmitUnavailable

log = logging.getLogger(__name__)

JOBS_PATH = "/api/v1/jobs"
# A refusal worth another attempt later: throttled or over a quota window.
_RETRY_LATER = {429, 503}


class SubmissionFollowUps:
    """The worker's :class:`jobs_sdk.follow_ups.Submitter`."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        internal_token: str,
        loop: asyncio.AbstractEventLoop,
        retry_after: float,
    ) -> None:
        self.client = client
        self.internal_token = internal_token
        self.loop = loop
        self.retry_after = retry_after

    async def submit(self, follow_up: FollowUp) -> uuid.UUID:
        if follow_up.submitted_by is None or follow_up.project_id is None:
            raise SubmitUnavailable(
                self.retry_after, "this job's dispatch does not name its owner (an older scheduler)"
            )
        project = str(follow_up.project_id)
        identity = Identity(
            user_id=follow_up.submitted_by,
            email=follow_up.submitted_by,
            role="user",
            project_id=project,
            project_role=OrgRole.MEMBER,
            grants=((project, OrgRole.MEMBER),),
        )
        headers = identity.headers(self.internal_token) | {
            "Idempotency-Key": follow_up.key,
            "X-Trace-Id": follow_up.trace_id,
        }
        try:
            response = await self.client.post(JOBS_PATH, json=body(follow_up), headers=headers)
        except httpx.HTTPError as exc:
            raise SubmitUnavailable(
                self.retry_after, f"the submission service did not answer: {type(exc).__name__}"
            ) from exc
        if response.status_code == 202:
            job_id = uuid.UUID(response.json()["jobId"])
            log.info(
                "follow-up submitted",
                extra={
                    "action": "follow_up_submitted",
                    "job_id": str(follow_up.from_job),
                    "follow_up_id": str(job_id),
                    "job_type": follow_up.job_type,
                    "replayed": response.headers.get("Idempotent-Replayed") == "true",
                },
            )
            return job_id
        return refused(response, self.retry_after)

    def submit_blocking(self, follow_up: FollowUp) -> uuid.UUID:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise RuntimeError("ctx.submit_sync blocks: an async handler awaits ctx.submit")
        return asyncio.run_coroutine_threadsafe(self.submit(follow_up), self.loop).result()


def body(follow_up: FollowUp) -> dict[str, Any]:
    """The submission's JSON (``JobCreate``), without the fields left to their defaults."""
    fields: dict[str, Any] = {
        "type": follow_up.job_type,
        "payload": follow_up.payload,
        "projectId": str(follow_up.project_id),
        "dependsOn": list(follow_up.depends_on) or None,
        "delaySeconds": follow_up.delay_seconds,
        "priority": follow_up.priority,
        "queue": follow_up.queue,
    }
    return {name: value for name, value in fields.items() if value is not None}


def refused(response: httpx.Response, retry_after: float) -> uuid.UUID:
    """Raise what a handler sees of an answer other than 202."""
    try:
        envelope = response.json()
    except ValueError:
        envelope = {}
    if not isinstance(envelope, dict):
        envelope = {}
    message = str(envelope.get("message") or response.reason_phrase)
    status = response.status_code
    if status >= 500 or status in _RETRY_LATER:
        delay = _seconds(response.headers.get("Retry-After"), retry_after)
        raise SubmitUnavailable(delay, f"follow-up not accepted now ({status}): {message}")
    details = envelope.get("details") or []
    named = "; ".join(
        f"{d.get('field')}: {d.get('message')}" for d in details if isinstance(d, dict)
    )
    raise SubmitRefused(
        f"follow-up refused ({status}): {message}" + (f" ({named})" if named else ""),
        status=status,
        error=str(envelope.get("error") or ""),
        details=details,
    )


def _seconds(value: str | None, default: float) -> float:
    try:
        return min(max(float(value), 0.0), 3_600.0) if value else default
    except ValueError:
        return default


@asynccontextmanager
async def follow_up_submitter(
    base_url: str, *, internal_token: str, timeout: float, retry_after: float
) -> AsyncIterator[SubmissionFollowUps]:
    """The submitter for this worker's lifetime (its HTTP client closed at stop)."""
    async with httpx.AsyncClient(base_url=base_url, timeout=timeout) as client:
        yield SubmissionFollowUps(
            client,
            internal_token=internal_token,
            loop=asyncio.get_running_loop(),
            retry_after=retry_after,
        )
