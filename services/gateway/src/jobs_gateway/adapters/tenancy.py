"""Organizations, memberships and projects in PostgreSQL (schema ``gateway``)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_common.errors import Conflict
from jobs_common.tenancy import (
    DEFAULT_PROJECT_SLUG,
    OrgRole,
    personal_organization_id,
    personal_project_id,
)
from jobs_gateway.adapters.audit import record
from jobs_gateway.adapters.tables import memberships, organizations, projects, users
from jobs_gateway.domain.audit import AuditEntry
from jobs_gateway.domain.project_scope import Grant, Selector
from jobs_gateway.domain.tenancy import (
    PERSONAL_PROJECT_NAME,
    Member,
    Membership,
    Organization,
    Project,
    personal_slug,
)

MEMBER_COLUMNS = (
    memberships.c.user_id,
    users.c.email,
    memberships.c.role,
    memberships.c.created_at,
)


def _organization(row: Any) -> Organization:
    return Organization(
        id=row.id, name=row.name, slug=row.slug, personal=row.personal, created_at=row.created_at
    )


def _project(row: Any) -> Project:
    return Project(
        id=row.id,
        organization_id=row.organization_id,
        name=row.name,
        slug=row.slug,
        created_by=row.created_by,
        created_at=row.created_at,
        personal_default=row.personal_default,
    )


async def create_personal(connection: AsyncConnection, *, user_id: uuid.UUID, email: str) -> None:
    """The personal organization of a new user (its owner) and its default project, in the
    transaction that inserts the user. Ids derive from the email (``jobs_common.tenancy``):
    a user deleted and registered again finds the same ones, so nothing is duplicated."""
    org_id = personal_organization_id(email)
    await connection.execute(
        insert(organizations)
        .values(id=org_id, name=email, slug=personal_slug(email), personal=True)
        .on_conflict_do_nothing(index_elements=[organizations.c.id])
    )
    await connection.execute(
        insert(memberships)
        .values(organization_id=org_id, user_id=user_id, role=OrgRole.OWNER.value)
        .on_conflict_do_nothing()
    )
    await connection.execute(
        insert(projects)
        .values(
            id=personal_project_id(email),
            organization_id=org_id,
            name=PERSONAL_PROJECT_NAME,
            slug=DEFAULT_PROJECT_SLUG,
            created_by=email,
            personal_default=True,
        )
        .on_conflict_do_nothing(index_elements=[projects.c.id])
    )


def _taken(what: str) -> Conflict:
    return Conflict(f"{what} is taken")


class TenancyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    # Organizations

    async def organization(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership | None:
        """The organization and the user's role in it (None: not a member)."""
        query = (
            sa.select(organizations, memberships.c.role)
            .select_from(
                organizations.outerjoin(
                    memberships,
                    sa.and_(
                        memberships.c.organization_id == organizations.c.id,
                        memberships.c.user_id == user_id,
                    ),
                )
            )
            .where(organizations.c.id == org_id)
        )
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        return Membership(_organization(row), OrgRole(row.role) if row.role else None)

    async def organizations_of(
        self, user_id: uuid.UUID | None, *, offset: int, limit: int
    ) -> tuple[list[Membership], int]:
        """The organizations of ``user_id`` with their role (None: every organization, for a
        platform admin, with the admin's role where a member), by name."""
        joined = organizations.outerjoin(
            memberships,
            sa.and_(
                memberships.c.organization_id == organizations.c.id,
                memberships.c.user_id == (user_id or uuid.UUID(int=0)),
            ),
        )
        where = memberships.c.user_id.is_not(None) if user_id is not None else sa.true()
        query = (
            sa.select(organizations, memberships.c.role)
            .select_from(joined)
            .where(where)
            .order_by(organizations.c.name, organizations.c.id)
            .offset(offset)
            .limit(limit)
        )
        count = sa.select(sa.func.count()).select_from(joined).where(where)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
            total = (await connection.execute(count)).scalar_one()
        return [
            Membership(_organization(r), OrgRole(r.role) if r.role else None) for r in rows
        ], total

    async def create_organization(
        self, *, name: str, slug: str, owner_id: uuid.UUID, audit: AuditEntry
    ) -> Organization:
        org_id = uuid.uuid4()
        try:
            async with self._engine.begin() as connection:
                row = (
                    await connection.execute(
                        insert(organizations)
                        .values(id=org_id, name=name, slug=slug, personal=False)
                        .returning(*organizations.c)
                    )
                ).one()
                await connection.execute(
                    insert(memberships).values(
                        organization_id=org_id, user_id=owner_id, role=OrgRole.OWNER.value
                    )
                )
                await record(connection, audit, organization_id=org_id)
        except IntegrityError as error:
            raise _taken(f"organization slug {slug!r}") from error
        return _organization(row)

    async def organization_by_slug(self, slug: str) -> Organization | None:
        query = sa.select(organizations).where(organizations.c.slug == slug)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return _organization(row) if row is not None else None

    async def update_organization(
        self, org_id: uuid.UUID, *, name: str | None, slug: str | None, audit: AuditEntry
    ) -> Organization | None:
        values = {k: v for k, v in {"name": name, "slug": slug}.items() if v is not None}
        statement = sa.update(organizations).where(organizations.c.id == org_id)
        try:
            async with self._engine.begin() as connection:
                row = (
                    await connection.execute(
                        statement.values(**values).returning(*organizations.c)
                        if values
                        else sa.select(organizations).where(organizations.c.id == org_id)
                    )
                ).first()
                if row is not None and values:
                    await record(connection, audit)
        except IntegrityError as error:
            raise _taken(f"organization slug {slug!r}") from error
        return _organization(row) if row is not None else None

    # Members

    async def members(
        self, org_id: uuid.UUID, *, offset: int, limit: int
    ) -> tuple[list[Member], int]:
        joined = memberships.join(users, users.c.id == memberships.c.user_id)
        where = memberships.c.organization_id == org_id
        query = (
            sa.select(
                memberships.c.user_id, users.c.email, memberships.c.role, memberships.c.created_at
            )
            .select_from(joined)
            .where(where)
            .order_by(users.c.email)
            .offset(offset)
            .limit(limit)
        )
        count = sa.select(sa.func.count()).select_from(memberships).where(where)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
            total = (await connection.execute(count)).scalar_one()
        return [Member(r.user_id, r.email, OrgRole(r.role), r.created_at) for r in rows], total

    async def member(self, org_id: uuid.UUID, user_id: uuid.UUID) -> Member | None:
        query = (
            sa.select(
                memberships.c.user_id, users.c.email, memberships.c.role, memberships.c.created_at
            )
            .select_from(memberships.join(users, users.c.id == memberships.c.user_id))
            .where(memberships.c.organization_id == org_id, memberships.c.user_id == user_id)
        )
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return Member(row.user_id, row.email, OrgRole(row.role), row.created_at) if row else None

    async def add_member(
        self, org_id: uuid.UUID, user_id: uuid.UUID, role: OrgRole, *, audit: AuditEntry
    ) -> bool:
        """False when the user is a member already (nothing changed)."""
        statement = (
            insert(memberships)
            .values(organization_id=org_id, user_id=user_id, role=role.value)
            .on_conflict_do_nothing()
            .returning(memberships.c.user_id)
        )
        async with self._engine.begin() as connection:
            added = (await connection.execute(statement)).first() is not None
            if added:
                await record(connection, audit)
            return added

    async def change_member(
        self, org_id: uuid.UUID, user_id: uuid.UUID, role: OrgRole | None, *, audit: AuditEntry
    ) -> bool:
        """Set a member's role (None: remove them); False when the change would leave the
        organization without an owner (nothing changed). Owners are counted under a lock of
        the organization's row, so two owners demoting each other at once keep one."""
        async with self._engine.begin() as connection:
            await connection.execute(
                sa.select(organizations.c.id).where(organizations.c.id == org_id).with_for_update()
            )
            owners = (
                (
                    await connection.execute(
                        sa.select(memberships.c.user_id).where(
                            memberships.c.organization_id == org_id,
                            memberships.c.role == OrgRole.OWNER.value,
                        )
                    )
                )
                .scalars()
                .all()
            )
            if owners == [user_id] and role is not OrgRole.OWNER:
                return False
            where = sa.and_(
                memberships.c.organization_id == org_id, memberships.c.user_id == user_id
            )
            if role is None:
                await connection.execute(sa.delete(memberships).where(where))
            else:
                await connection.execute(
                    sa.update(memberships).where(where).values(role=role.value)
                )
            await record(connection, audit)
        return True

    # Projects

    async def projects(
        self, org_ids: list[uuid.UUID] | None, *, offset: int, limit: int
    ) -> tuple[list[Project], int]:
        """The projects of ``org_ids`` (None: every organization's), by name."""
        where = projects.c.organization_id.in_(org_ids) if org_ids is not None else sa.true()
        query = (
            sa.select(projects)
            .where(where)
            .order_by(projects.c.name, projects.c.id)
            .offset(offset)
            .limit(limit)
        )
        count = sa.select(sa.func.count()).select_from(projects).where(where)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
            total = (await connection.execute(count)).scalar_one()
        return [_project(r) for r in rows], total

    async def project(self, project_id: uuid.UUID) -> Project | None:
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(sa.select(projects).where(projects.c.id == project_id))
            ).first()
        return _project(row) if row is not None else None

    async def create_project(
        self, *, org_id: uuid.UUID, name: str, slug: str, created_by: str, audit: AuditEntry
    ) -> Project:
        statement = (
            insert(projects)
            .values(
                id=uuid.uuid4(), organization_id=org_id, name=name, slug=slug, created_by=created_by
            )
            .returning(*projects.c)
        )
        try:
            async with self._engine.begin() as connection:
                row = (await connection.execute(statement)).one()
                await record(connection, replace(audit, project_id=row.id))
        except IntegrityError as error:
            raise _taken(f"project slug {slug!r} in this organization") from error
        return _project(row)

    async def update_project(
        self, project_id: uuid.UUID, *, name: str | None, slug: str | None, audit: AuditEntry
    ) -> Project | None:
        values = {k: v for k, v in {"name": name, "slug": slug}.items() if v is not None}
        try:
            async with self._engine.begin() as connection:
                row = (
                    await connection.execute(
                        sa.update(projects)
                        .where(projects.c.id == project_id)
                        .values(**values)
                        .returning(*projects.c)
                        if values
                        else sa.select(projects).where(projects.c.id == project_id)
                    )
                ).first()
                if row is not None and values:
                    await record(connection, audit)
        except IntegrityError as error:
            raise _taken(f"project slug {slug!r} in this organization") from error
        return _project(row) if row is not None else None

    async def delete_project(self, project_id: uuid.UUID, *, audit: AuditEntry) -> bool:
        async with self._engine.begin() as connection:
            result = await connection.execute(
                sa.delete(projects).where(projects.c.id == project_id).returning(projects.c.id)
            )
            deleted = result.first() is not None
            if deleted:
                await record(connection, audit)
            return deleted

    async def member_orgs(self, user_id: uuid.UUID) -> dict[uuid.UUID, OrgRole]:
        """Every organization the user belongs to, with their role."""
        query = sa.select(memberships.c.organization_id, memberships.c.role).where(
            memberships.c.user_id == user_id
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return {r.organization_id: OrgRole(r.role) for r in rows}

    async def grants_of(self, user_id: uuid.UUID, *, limit: int) -> list[Grant]:
        """Up to ``limit`` projects of the user's organizations, with their role there."""
        query = (
            sa.select(
                projects.c.id,
                projects.c.slug,
                organizations.c.slug.label("organization_slug"),
                memberships.c.role,
            )
            .select_from(
                memberships.join(
                    organizations, organizations.c.id == memberships.c.organization_id
                ).join(projects, projects.c.organization_id == memberships.c.organization_id)
            )
            .where(memberships.c.user_id == user_id)
            .order_by(projects.c.id)
            .limit(limit)
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [_grant(r, OrgRole(r.role)) for r in rows]

    async def grant_of_any(self, selector: Selector) -> Grant | None:
        """The project ``selector`` names among every organization's (the platform admin's
        view), as its owner; None when it names none or, by bare slug, several."""
        query = sa.select(
            projects.c.id, projects.c.slug, organizations.c.slug.label("organization_slug")
        ).select_from(
            projects.join(organizations, organizations.c.id == projects.c.organization_id)
        )
        if selector.project_id is not None:
            query = query.where(projects.c.id == selector.project_id)
        else:
            query = query.where(projects.c.slug == selector.slug)
            if selector.organization_slug is not None:
                query = query.where(organizations.c.slug == selector.organization_slug)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query.limit(2))).all()
        return _grant(rows[0], OrgRole.OWNER) if len(rows) == 1 else None


def _grant(row: Any, role: OrgRole) -> Grant:
    return Grant(
        project_id=row.id, slug=row.slug, organization_slug=row.organization_slug, role=role
    )
