"""The organization audit log (docs/tenancy.md, "Audit log"): one row per change of an
organization, its members, projects or API keys, naming who made it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from jobs_gateway.domain.tenancy import Project


class AuditAction(StrEnum):
    ORGANIZATION_CREATED = "organization.created"
    ORGANIZATION_UPDATED = "organization.updated"
    MEMBER_ADDED = "member.added"
    MEMBER_ROLE_CHANGED = "member.role_changed"
    MEMBER_REMOVED = "member.removed"
    PROJECT_CREATED = "project.created"
    PROJECT_UPDATED = "project.updated"
    PROJECT_DELETED = "project.deleted"
    API_KEY_CREATED = "api_key.created"
    API_KEY_REVOKED = "api_key.revoked"


@dataclass(frozen=True)
class AuditEntry:
    """What a change records, written in the change's own transaction. ``subject``: what it
    changed, as people read it (a member's email, a project's slug, a key's prefix)."""

    action: AuditAction
    actor: str
    organization_id: uuid.UUID | None = None  # None: the organization the change creates
    project_id: uuid.UUID | None = None
    subject: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def of_project(
    action: AuditAction, actor: str, project: Project, subject: str | None = None, **details: Any
) -> AuditEntry:
    """An entry about ``project`` (or a thing of it): its organization and id; the subject
    the project's slug unless given."""
    return AuditEntry(
        action,
        actor,
        project.organization_id,
        project.id,
        subject=project.slug if subject is None else subject,
        details=details,
    )


@dataclass(frozen=True)
class AuditEvent:
    id: int
    action: str
    actor: str
    project_id: uuid.UUID | None
    subject: str | None
    details: dict[str, Any]
    at: datetime
