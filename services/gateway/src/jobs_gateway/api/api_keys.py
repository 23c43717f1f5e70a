"""/api/projects/{id}/api-keys (a project's admins) and /api/api-key (the key you call with)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, status
from pydantic import Field, field_validator

from jobs_common.api_models import CamelModel, Page
from jobs_common.contracts import utcnow
from jobs_common.errors import ErrorEnvelope, Unauthorized
from jobs_gateway.api.deps import LimitedIdentity, presented_key
from jobs_gateway.api.tenancy import Name, PageDep
from jobs_gateway.app.api_keys import ApiKeys
from jobs_gateway.domain.api_keys import ApiKey, KeyRole

router = APIRouter(prefix="/api", tags=["api keys"])

Responses = dict[int | str, dict[str, Any]]
_errors: Responses = {
    403: {"model": ErrorEnvelope, "description": "your role may not do this"},
    404: {"model": ErrorEnvelope, "description": "not found, or not yours to see"},
}


async def _api_keys(request: Request) -> ApiKeys:
    keys: ApiKeys = request.app.state.api_keys
    return keys


ApiKeysDep = Annotated[ApiKeys, Depends(_api_keys)]


async def _calling_key(request: Request, keys: ApiKeysDep) -> ApiKey:
    presented = presented_key(request)
    if presented is None:
        raise Unauthorized("missing API key (X-API-Key, or Authorization: Bearer jk_...)")
    return await keys.authenticate(presented)


CallingKey = Annotated[ApiKey, Depends(_calling_key)]


class ApiKeyCreate(CamelModel):
    name: Name
    role: KeyRole = Field(description="What the key may do in its project: member or viewer.")
    expires_at: datetime | None = Field(
        default=None, description="When it stops working; null: never (revoke it instead)."
    )

    @field_validator("expires_at")
    @classmethod
    def _future(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("must carry a timezone (e.g. Z)")
        if value <= utcnow():
            raise ValueError("must be in the future")
        return value


class ApiKeyOut(CamelModel):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    role: KeyRole
    prefix: str = Field(description="`jk_<prefix>_...`: names the key; the secret is not kept.")
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None = Field(description="Recorded at most once a minute.")
    revoked_at: datetime | None
    revoked_by: str | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyOut:
        return cls(
            id=key.id,
            project_id=key.project_id,
            name=key.name,
            role=key.role,
            prefix=key.prefix,
            created_by=key.created_by,
            created_at=key.created_at,
            expires_at=key.expires_at,
            last_used_at=key.last_used_at,
            revoked_at=key.revoked_at,
            revoked_by=key.revoked_by,
        )


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The key itself: shown this once, never again. Store it now.")


@router.get(
    "/projects/{project_id}/api-keys", summary="A project's API keys (admin)", responses=_errors
)
async def list_api_keys(
    project_id: uuid.UUID, identity: LimitedIdentity, keys: ApiKeysDep, page: PageDep
) -> Page[ApiKeyOut]:
    items, total = await keys.of_project(identity, project_id, page.paging)
    return Page[ApiKeyOut].of([ApiKeyOut.of(k) for k in items], total, page)


@router.post(
    "/projects/{project_id}/api-keys",
    status_code=status.HTTP_201_CREATED,
    summary="Create an API key for a project (admin); the key is in this answer only",
    responses=_errors,
)
async def create_api_key(
    project_id: uuid.UUID, body: ApiKeyCreate, identity: LimitedIdentity, keys: ApiKeysDep
) -> ApiKeyCreated:
    key, secret = await keys.create(
        identity, project_id, name=body.name, role=body.role, expires_at=body.expires_at
    )
    return ApiKeyCreated(**ApiKeyOut.of(key).model_dump(), key=secret)


@router.delete(
    "/projects/{project_id}/api-keys/{key_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Revoke an API key (admin): refused from the next request on",
    responses=_errors,
)
async def revoke_api_key(
    project_id: uuid.UUID, key_id: uuid.UUID, identity: LimitedIdentity, keys: ApiKeysDep
) -> Response:
    await keys.revoke(identity, project_id, key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/api-key",
    summary="The API key you call with: its project and role",
    responses={401: {"model": ErrorEnvelope, "description": "no key, or not a usable one"}},
)
async def calling_api_key(key: CallingKey) -> ApiKeyOut:
    return ApiKeyOut.of(key)
