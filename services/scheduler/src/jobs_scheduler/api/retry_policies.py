"""``/internal/v1/retry-policies``: a named retry policy stored for the dashboard, which
checked the request: in the request's project by one of its admins, or shared by every project
by the platform admin; 409 when the name is taken there. Service to service, like
``api/schedules.py``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from jobs_common.errors import Conflict, ErrorDetail
from jobs_common.request_identity import CurrentIdentity
from jobs_common.retry_policy_commands import (
    RETRY_POLICIES_PATH,
    RetryPolicyCreate,
    RetryPolicyView,
    policy_project,
)
from jobs_scheduler.adapters import retry_policies
from jobs_scheduler.api.deps import engine_of

router = APIRouter(prefix=RETRY_POLICIES_PATH, include_in_schema=False)


@router.post("", status_code=201)
async def create_policy(
    request: Request, policy: RetryPolicyCreate, identity: CurrentIdentity
) -> RetryPolicyView:
    created = await retry_policies.create(
        engine_of(request),
        policy,
        created_by=identity.actor,
        project_id=policy_project(identity),
    )
    if created is None:
        raise Conflict(
            f"a retry policy named {policy.name!r} already exists",
            details=[ErrorDetail(field="name", message="already exists in this project")],
        )
    return created
