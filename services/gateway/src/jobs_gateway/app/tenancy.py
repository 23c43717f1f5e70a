"""Organizations, members and projects as the API offers them, with who may do what
(docs/tenancy.md): another organization's objects are not found (404), never forbidden, so
their existence does not leak; a member short of the role an action needs is refused (403)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from jobs_common.auth import Identity
from jobs_common.errors import Conflict, Forbidden, NotFound
from jobs_common.tenancy import OrgRole
from jobs_gateway.adapters.audit import AuditLog
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.audit import AuditAction, AuditEntry, AuditEvent, of_project
from jobs_gateway.domain.tenancy import Member, Membership, Project

log = logging.getLogger(__name__)

ORG_NOT_FOUND = "organization not found"
PROJECT_NOT_FOUND = "project not found"


@dataclass(frozen=True)
class Paging:
    offset: int
    limit: int


def _user_id(identity: Identity) -> uuid.UUID:
    return uuid.UUID(identity.user_id)


class Tenancy:
    def __init__(self, store: TenancyStore, users: UserRepository, audit_log: AuditLog) -> None:
        self.store = store
        self.users = users
        self.audit_log = audit_log

    async def _membership(
        self, identity: Identity, org_id: uuid.UUID, needs: OrgRole = OrgRole.VIEWER
    ) -> Membership:
        """The organization as ``identity`` sees it: 404 unless a member (or the platform
        admin), 403 for a member below ``needs``."""
        membership = await self.store.organization(org_id, _user_id(identity))
        if membership is None or (membership.role is None and not identity.is_admin):
            raise NotFound(ORG_NOT_FOUND)
        if not identity.is_admin and not (membership.role and membership.role.at_least(needs)):
            raise Forbidden(f"this needs the {needs.value} role in the organization")
        return membership

    # Organizations

    async def organizations(
        self, identity: Identity, paging: Paging
    ) -> tuple[list[Membership], int]:
        user = None if identity.is_admin else _user_id(identity)
        return await self.store.organizations_of(user, offset=paging.offset, limit=paging.limit)

    async def organization(self, identity: Identity, org_id: uuid.UUID) -> Membership:
        return await self._membership(identity, org_id)

    async def create_organization(self, identity: Identity, *, name: str, slug: str) -> Membership:
        organization = await self.store.create_organization(
            name=name,
            slug=slug,
            owner_id=_user_id(identity),
            audit=AuditEntry(AuditAction.ORGANIZATION_CREATED, identity.email, subject=slug),
        )
        log.info(
            "organization created",
            extra={"action": "organization_created", "organization_id": str(organization.id)},
        )
        return Membership(organization, OrgRole.OWNER)

    async def update_organization(
        self, identity: Identity, org_id: uuid.UUID, *, name: str | None, slug: str | None
    ) -> Membership:
        membership = await self._membership(identity, org_id, OrgRole.OWNER)
        changed = {k: v for k, v in {"name": name, "slug": slug}.items() if v is not None}
        audit = AuditEntry(
            AuditAction.ORGANIZATION_UPDATED, identity.email, org_id, details=changed
        )
        updated = await self.store.update_organization(org_id, name=name, slug=slug, audit=audit)
        if updated is None:
            raise NotFound(ORG_NOT_FOUND)
        return Membership(updated, membership.role)

    async def audit(
        self, identity: Identity, org_id: uuid.UUID, paging: Paging
    ) -> tuple[list[AuditEvent], int]:
        """The organization's audit log, newest first: its admins' and owners' to read."""
        await self._membership(identity, org_id, OrgRole.ADMIN)
        return await self.audit_log.of_organization(
            org_id, offset=paging.offset, limit=paging.limit
        )

    # Members

    async def members(
        self, identity: Identity, org_id: uuid.UUID, paging: Paging
    ) -> tuple[list[Member], int]:
        await self._membership(identity, org_id)
        return await self.store.members(org_id, offset=paging.offset, limit=paging.limit)

    async def add_member(
        self, identity: Identity, org_id: uuid.UUID, *, email: str, role: OrgRole
    ) -> Member:
        await self._membership(identity, org_id, OrgRole.OWNER)
        user = await self.users.by_email(email)
        if user is None:
            raise NotFound("no registered user has this email: they register first")
        audit = AuditEntry(
            AuditAction.MEMBER_ADDED,
            identity.email,
            org_id,
            subject=user.email,
            details={"role": role.value},
        )
        if not await self.store.add_member(org_id, user.id, role, audit=audit):
            raise Conflict("this user is a member already: change their role instead")
        member = await self.store.member(org_id, user.id)
        assert member is not None
        log.info(
            "member added",
            extra={"action": "member_added", "organization_id": str(org_id), "role": role.value},
        )
        return member

    async def change_member(
        self, identity: Identity, org_id: uuid.UUID, user_id: uuid.UUID, role: OrgRole | None
    ) -> Member | None:
        """Change a member's role, or remove them (``role`` None): the owner's to do; any
        member may leave. An organization always keeps an owner (409)."""
        leaving = role is None and user_id == _user_id(identity)
        await self._membership(identity, org_id, OrgRole.VIEWER if leaving else OrgRole.OWNER)
        member = await self.store.member(org_id, user_id)
        if member is None:
            raise NotFound("no such member")
        audit = AuditEntry(
            AuditAction.MEMBER_REMOVED if role is None else AuditAction.MEMBER_ROLE_CHANGED,
            identity.email,
            org_id,
            subject=member.email,
            details={"from": member.role.value, "to": role.value if role else None},
        )
        if not await self.store.change_member(org_id, user_id, role, audit=audit):
            raise Conflict(
                "an organization keeps at least one owner: make another member owner first"
            )
        log.info(
            "member changed",
            extra={
                "action": "member_removed" if role is None else "member_role_changed",
                "organization_id": str(org_id),
                "role": role.value if role else None,
            },
        )
        return await self.store.member(org_id, user_id) if role is not None else None

    # Projects

    async def projects(
        self, identity: Identity, org_id: uuid.UUID | None, paging: Paging
    ) -> tuple[list[Project], int]:
        if org_id is not None:
            await self._membership(identity, org_id)
            orgs: list[uuid.UUID] | None = [org_id]
        elif identity.is_admin:
            orgs = None
        else:
            orgs = list(await self.store.member_orgs(_user_id(identity)))
        return await self.store.projects(orgs, offset=paging.offset, limit=paging.limit)

    async def _project(
        self, identity: Identity, project_id: uuid.UUID, needs: OrgRole = OrgRole.VIEWER
    ) -> Project:
        project = await self.store.project(project_id)
        if project is None:
            raise NotFound(PROJECT_NOT_FOUND)
        try:
            await self._membership(identity, project.organization_id, needs)
        except NotFound:
            raise NotFound(PROJECT_NOT_FOUND) from None
        return project

    async def project(self, identity: Identity, project_id: uuid.UUID) -> Project:
        return await self._project(identity, project_id)

    async def project_with_role(
        self, identity: Identity, project_id: uuid.UUID, needs: OrgRole
    ) -> Project:
        """The project, if ``identity`` has ``needs`` in its organization (404 / 403)."""
        return await self._project(identity, project_id, needs)

    async def create_project(
        self, identity: Identity, org_id: uuid.UUID, *, name: str, slug: str
    ) -> Project:
        await self._membership(identity, org_id, OrgRole.ADMIN)
        project = await self.store.create_project(
            org_id=org_id,
            name=name,
            slug=slug,
            created_by=identity.email,
            audit=AuditEntry(AuditAction.PROJECT_CREATED, identity.email, org_id, subject=slug),
        )
        log.info(
            "project created",
            extra={"action": "project_created", "project_id": str(project.id)},
        )
        return project

    async def update_project(
        self, identity: Identity, project_id: uuid.UUID, *, name: str | None, slug: str | None
    ) -> Project:
        project = await self._project(identity, project_id, OrgRole.ADMIN)
        if project.personal_default and slug is not None and slug != project.slug:
            raise Conflict("a personal organization's default project keeps its slug")
        changed = {k: v for k, v in {"name": name, "slug": slug}.items() if v is not None}
        audit = of_project(AuditAction.PROJECT_UPDATED, identity.email, project, **changed)
        updated = await self.store.update_project(project_id, name=name, slug=slug, audit=audit)
        if updated is None:
            raise NotFound(PROJECT_NOT_FOUND)
        return updated

    async def delete_project(
        self,
        identity: Identity,
        project_id: uuid.UUID,
        unfinished: Callable[[uuid.UUID], Awaitable[int]],
    ) -> None:
        """Delete a project without unfinished jobs (``unfinished`` counts them; 409 when
        there are any: cancel them or let them finish first)."""
        project = await self._project(identity, project_id, OrgRole.ADMIN)
        if project.personal_default:
            raise Conflict(
                "a personal organization's default project cannot be deleted: its owner's "
                "jobs without a project go there"
            )
        if (count := await unfinished(project_id)) > 0:
            raise Conflict(
                f"the project has {count} unfinished job{'s' if count != 1 else ''}: cancel "
                "them or let them finish, then delete it"
            )
        audit = of_project(AuditAction.PROJECT_DELETED, identity.email, project)
        if not await self.store.delete_project(project_id, audit=audit):
            raise NotFound(PROJECT_NOT_FOUND)
        log.info(
            "project deleted", extra={"action": "project_deleted", "project_id": str(project_id)}
        )
