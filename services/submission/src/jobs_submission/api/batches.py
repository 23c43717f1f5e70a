"""``/api/v1/batches``: submit up to 10,000 jobs at once, read a batch's status."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from jobs_common.api_models import REPLAYED_HEADER
from jobs_submission.api.deps import BatchServiceDep, CurrentIdentity, IdempotencyKey, TraceId
from jobs_submission.api.routes import ERRORS, READ_ERRORS, json_body
from jobs_submission.domain.batches import BatchCreate
from jobs_submission.domain.documents import BatchAccepted, BatchStatusPublic


def build_batch_router() -> APIRouter:
    router = APIRouter(prefix="/api/v1/batches", tags=["batches"])

    @router.post(
        "",
        status_code=202,
        response_model=BatchAccepted,
        responses=ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": BatchCreate.model_json_schema(by_alias=True)}
                },
            }
        },
    )
    async def submit_batch(
        request: Request,
        response: Response,
        identity: CurrentIdentity,
        service: BatchServiceDep,
        idempotency_key: IdempotencyKey = None,
        trace_id: TraceId = None,
    ) -> BatchAccepted:
        """Accept every spec or none: one batch document, one bulk insert, one relay wake-up.

        A spec may carry ``ref`` and name other specs in ``dependsOn`` as ``ref:<label>``.
        ``jobIds`` come in spec order.
        """
        accepted = await service.submit(
            await json_body(request),
            identity=identity,
            idempotency_key=idempotency_key,
            trace_id=trace_id or uuid.uuid4().hex,
        )
        if accepted.replayed:
            response.headers[REPLAYED_HEADER] = "true"
        return BatchAccepted(
            batch_id=accepted.batch_id, job_ids=accepted.job_ids, idempotency_key=idempotency_key
        )

    @router.get("/{batchId}/status", response_model=BatchStatusPublic, responses=READ_ERRORS)
    async def batch_status(
        batch_id: Annotated[uuid.UUID, Path(alias="batchId")],
        identity: CurrentIdentity,
        service: BatchServiceDep,
    ) -> BatchStatusPublic:
        """The batch as stored by this service, with how many members were published."""
        return await service.status(str(batch_id), identity=identity)

    return router
