"""FastAPI dependencies as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, ValidationError
from starlette.datastructures import Headers

from jobs_common.payloads import header_safe
from jobs_common.request_identity import CurrentIdentity
from jobs_submission.app.batches import BatchService
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.domain.requests import IDEMPOTENCY_KEY_MAX

__all__ = [
    "BatchServiceDep",
    "CurrentIdentity",
    "IdempotencyKey",
    "ServiceDep",
    "SubmissionHeaders",
    "TraceId",
]


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


class SubmissionHeaders(BaseModel):
    """Both headers read and checked as FastAPI checks the routes' ``IdempotencyKey`` and
    ``TraceId`` parameters (same types, same errors), for a handler without FastAPI's
    dependency resolution (``jobs_common.fast_routes``)."""

    idempotency_key: IdempotencyKey = None
    trace_id: TraceId = None

    @classmethod
    def of(cls, headers: Headers) -> SubmissionHeaders:
        """422 (as a route's header parameters) when either is invalid."""
        present = {
            field.alias: value
            for field in cls.model_fields.values()
            if field.alias and (value := headers.get(field.alias)) is not None
        }
        try:
            return cls.model_validate(present)
        except ValidationError as exc:
            raise RequestValidationError(
                [{**error, "loc": ("header", *error["loc"])} for error in exc.errors()]
            ) from None
