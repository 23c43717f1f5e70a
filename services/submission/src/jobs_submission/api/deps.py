"""FastAPI dependencies as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from pydantic import AfterValidator

from jobs_common.payloads import header_safe
from jobs_common.request_identity import CurrentIdentity
from jobs_submission.app.batches import BatchService
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.domain.requests import IDEMPOTENCY_KEY_MAX

__all__ = ["BatchServiceDep", "CurrentIdentity", "IdempotencyKey", "ServiceDep", "TraceId"]


async def _service(request: Request) -> SubmissionService:
    service: SubmissionService = request.app.state.submissions
    return service


async def _batch_service(request: Request) -> BatchService:
    service: BatchService = request.app.state.batches
    return service


ServiceDep = Annotated[SubmissionService, Depends(_service)]
BatchServiceDep = Annotated[BatchService, Depends(_batch_service)]
# Both are stored and travel on in message headers: no control characters.
IdempotencyKey = Annotated[
    str | None,
    AfterValidator(header_safe),
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=IDEMPOTENCY_KEY_MAX,
        description="Same key + same body returns the first answer; another body -> 409.",
    ),
]
TraceId = Annotated[
    str | None, AfterValidator(header_safe), Header(alias="X-Trace-Id", max_length=128)
]
