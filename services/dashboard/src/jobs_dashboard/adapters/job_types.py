"""The job types the submission service knows, asked over HTTP.

The submission service owns the type registry (the types workers announce, their JSON
Schemas and defaults). A schedule's job template or an edited requeue of a type that is not
built in is checked there (``POST /internal/v1/job-types/{type}/check``), by the same rule a
submission meets, instead of a copy of the registry here."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, UpstreamUnavailable, ValidationFailed
from jobs_dashboard.domain.payloads import CheckedPayload, moved_under


class SubmissionTypes:
    def __init__(self, client: httpx.AsyncClient, *, internal_token: str) -> None:
        self.client = client
        self.internal_token = internal_token

    async def check(
        self, job_type: str, payload: dict[str, Any], *, identity: Identity, prefix: str
    ) -> CheckedPayload:
        """The payload as a submission of ``job_type`` would store it, with the type's queue
        and defaults. Raises ValidationFailed with field paths under ``prefix``, and
        UpstreamUnavailable (503) when the submission service does not answer."""
        try:
            answer = await self.client.post(
                f"/internal/v1/job-types/{quote(job_type, safe='')}/check",
                json={"payload": payload},
                headers=identity.headers(self.internal_token),
            )
        except httpx.HTTPError as exc:
            raise UpstreamUnavailable("the job type registry is unreachable; retry") from exc
        if answer.status_code == 422:
            details = [ErrorDetail.model_validate(d) for d in answer.json().get("details", [])]
            raise ValidationFailed(
                "request validation failed",
                details=[moved_under(detail, prefix) for detail in details],
            )
        if answer.status_code != 200:
            raise UpstreamUnavailable(f"the job type registry answered {answer.status_code}; retry")
        body = answer.json()
        return CheckedPayload(
            payload=body["payload"],
            queue=body["queue"],
            max_attempts=body.get("maxAttempts"),
            timeout_seconds=body.get("timeoutSeconds"),
        )
