"""GET /api/organizations/{id}/audit: who changed the organization, its members, projects
and API keys (docs/tenancy.md, "Audit log")."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from fastapi import APIRouter
from pydantic import Field

from jobs_common.api_models import CamelModel, Page
from jobs_common.errors import ErrorEnvelope
from jobs_gateway.api.deps import LimitedIdentity
from jobs_gateway.api.tenancy import PageDep, TenancyDep
from jobs_gateway.domain.audit import AuditEvent

router = APIRouter(prefix="/api", tags=["organizations"])


class AuditEventOut(CamelModel):
    id: int
    action: str = Field(description="organization.*, member.*, project.*, api_key.* (docs).")
    actor: str = Field(description="Who did it: a person's email.")
    project_id: uuid.UUID | None
    subject: str | None = Field(description="A member's email, a project's slug, a key's prefix.")
    details: dict[str, Any]
    at: datetime

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventOut:
        return cls(
            id=event.id,
            action=event.action,
            actor=event.actor,
            project_id=event.project_id,
            subject=event.subject,
            details=event.details,
            at=event.at,
        )


@router.get(
    "/organizations/{org_id}/audit",
    summary="An organization's audit log, newest first (its admins and owners)",
    responses={
        403: {"model": ErrorEnvelope, "description": "a member or viewer"},
        404: {"model": ErrorEnvelope, "description": "not found, or not yours to see"},
    },
)
async def audit_log(
    org_id: uuid.UUID, identity: LimitedIdentity, tenancy: TenancyDep, page: PageDep
) -> Page[AuditEventOut]:
    items, total = await tenancy.audit(identity, org_id, page.paging)
    return Page[AuditEventOut].of([AuditEventOut.of(e) for e in items], total, page)
