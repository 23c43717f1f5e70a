"""The organization audit log in PostgreSQL (``gateway.audit_events``): rows appended inside
the transaction of the change they record, read newest first per organization."""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from jobs_gateway.adapters.tables import audit_events
from jobs_gateway.domain.audit import AuditEntry, AuditEvent


async def record(
    connection: AsyncConnection, entry: AuditEntry, *, organization_id: uuid.UUID | None = None
) -> None:
    """Append ``entry`` (its organization, else ``organization_id``) in ``connection``'s
    transaction: the change and its row commit together or not at all."""
    organization = entry.organization_id or organization_id
    assert organization is not None, "an audit row belongs to an organization"
    await connection.execute(
        sa.insert(audit_events).values(
            organization_id=organization,
            project_id=entry.project_id,
            actor=entry.actor,
            action=entry.action.value,
            subject=entry.subject,
            details=entry.details,
        )
    )


class AuditLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def of_organization(
        self, org_id: uuid.UUID, *, offset: int, limit: int
    ) -> tuple[list[AuditEvent], int]:
        """Newest first (``ix_audit_events_organization``)."""
        where = audit_events.c.organization_id == org_id
        query = (
            sa.select(audit_events)
            .where(where)
            .order_by(audit_events.c.id.desc())
            .offset(offset)
            .limit(limit)
        )
        count = sa.select(sa.func.count()).select_from(audit_events).where(where)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
            total = (await connection.execute(count)).scalar_one()
        events = [
            AuditEvent(
                id=r.id,
                action=r.action,
                actor=r.actor,
                project_id=r.project_id,
                subject=r.subject,
                details=r.details,
                at=r.at,
            )
            for r in rows
        ]
        return events, total
