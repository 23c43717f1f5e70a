"""``/api/v1/jobs``: submit a job, read its submission status."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from jobs_common.api_models import REPLAYED_HEADER
from jobs_common.auth import Identity
from jobs_common.errors import ErrorEnvelope
from jobs_common.fast_routes import FastRoute
from jobs_common.json_response import JsonResponse
from jobs_common.request_identity import current_identity
from jobs_common.storable_text import decode_json
from jobs_submission.api.deps import (
    CurrentIdentity,
    IdempotencyKey,
    ServiceDep,
    SubmissionHeaders,
    TraceId,
)
from jobs_submission.app.submissions import SubmissionService
from jobs_submission.domain.documents import JobAccepted, SubmissionPublic
from jobs_submission.domain.requests import JobCreate

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorEnvelope, "description": text}
    for code, text in {
        400: "Malformed JSON, or no project to submit to",
        401: "Missing internal credentials or identity",
        403: "Not allowed to submit for another user, or to this project (a viewer)",
        404: "Unknown job/batch or project, or not yours to see",
        409: "Idempotency-Key reused with another body",
        413: "Request body above the route's limit",
        422: "Validation error",
    }.items()
}
# What a read by id can answer (no body, so no 400/409/413 of its own).
READ_ERRORS: dict[int | str, dict[str, Any]] = {code: ERRORS[code] for code in (401, 404, 422)}


async def json_body(request: Request) -> Any:
    """The body decoded and checked (``jobs_common.storable_text``): 400 if it is not JSON,
    422 naming the field if a string or key holds a NUL, before anything is stored."""
    return decode_json(await request.body())


async def _accept(
    request: Request,
    service: SubmissionService,
    identity: Identity,
    idempotency_key: str | None,
    trace_id: str | None,
) -> tuple[JobAccepted, bool]:
    """The job accepted (or replayed: True) and the answer's body."""
    accepted = await service.submit(
        await json_body(request),
        identity=identity,
        idempotency_key=idempotency_key,
        trace_id=trace_id or uuid.uuid4().hex,
    )
    return JobAccepted(job_id=accepted.job_id, idempotency_key=idempotency_key), accepted.replayed


async def accept_job(request: Request) -> Response:
    """``POST /api/v1/jobs`` as its fast route (:func:`fast_routes`) serves it: what
    ``submit_job``'s declared parameters check, in FastAPI's order (the caller: 401; then the
    headers: 422), then the same acceptance."""
    identity = await current_identity(request)
    headers = SubmissionHeaders.of(request.headers)
    service: SubmissionService = request.app.state.submissions
    body, replayed = await _accept(
        request, service, identity, headers.idempotency_key, headers.trace_id
    )
    return JsonResponse(
        body.model_dump(mode="json", by_alias=True),
        status_code=202,
        headers={REPLAYED_HEADER: "true"} if replayed else None,
    )


def fast_routes() -> list[FastRoute]:
    """Single submissions, the hot route (``jobs_common.fast_routes``)."""
    return [FastRoute("POST", "/api/v1/jobs", route_name="submit_job", handler=accept_job)]


def build_router() -> APIRouter:
    router = APIRouter(prefix="/api/v1/jobs", tags=["jobs"])

    @router.post(
        "",
        status_code=202,
        response_model=JobAccepted,
        responses=ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": JobCreate.model_json_schema(by_alias=True)}
                },
            }
        },
    )
    async def submit_job(
        request: Request,
        response: Response,
        identity: CurrentIdentity,
        service: ServiceDep,
        idempotency_key: IdempotencyKey = None,
        trace_id: TraceId = None,
    ) -> JobAccepted:
        """Accept a job: stored durably, then relayed to the scheduler.

        ``runAt`` (ISO 8601 with offset) or ``delaySeconds`` delay it; ``retryPolicy`` is an
        inline policy or a stored policy's name; ``dependsOn`` lists job ids of the same
        project; ``projectId`` (or ``X-Project``) names the project, else your personal default
        project; the Idempotency-Key is unique per project.
        """
        body, replayed = await _accept(request, service, identity, idempotency_key, trace_id)
        if replayed:
            response.headers[REPLAYED_HEADER] = "true"
        return body

    @router.get("/{jobId}/status", response_model=SubmissionPublic, responses=READ_ERRORS)
    async def job_status(
        job_id: Annotated[uuid.UUID, Path(alias="jobId")],
        identity: CurrentIdentity,
        service: ServiceDep,
    ) -> SubmissionPublic:
        """The submission record (accepted / published), for whoever sees its project."""
        return await service.status(str(job_id), identity=identity)

    return router
