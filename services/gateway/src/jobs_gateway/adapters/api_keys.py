"""Project API keys in PostgreSQL (schema ``gateway``)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_gateway.adapters.audit import record
from jobs_gateway.adapters.tables import api_keys
from jobs_gateway.domain.api_keys import ApiKey, KeyRole, NewKey
from jobs_gateway.domain.audit import AuditEntry


def _key(row: Any) -> ApiKey:
    return ApiKey(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        role=cast(KeyRole, row.role),
        prefix=row.prefix,
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
        revoked_by=row.revoked_by,
    )


PUBLIC_COLUMNS = [c for c in api_keys.c if c.name != "secret_hash"]


class ApiKeyStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def create(
        self,
        *,
        project_id: uuid.UUID,
        name: str,
        role: KeyRole,
        new: NewKey,
        created_by: str,
        expires_at: datetime | None,
        audit: AuditEntry,
    ) -> ApiKey:
        statement = (
            insert(api_keys)
            .values(
                id=uuid.uuid4(),
                project_id=project_id,
                name=name,
                role=role,
                prefix=new.prefix,
                secret_hash=new.secret_hash,
                created_by=created_by,
                expires_at=expires_at,
            )
            .returning(*PUBLIC_COLUMNS)
        )
        async with self._engine.begin() as connection:
            key = _key((await connection.execute(statement)).one())
            await record(connection, audit)
            return key

    async def of_project(
        self, project_id: uuid.UUID, *, offset: int, limit: int
    ) -> tuple[list[ApiKey], int]:
        where = api_keys.c.project_id == project_id
        query = (
            sa.select(*PUBLIC_COLUMNS)
            .where(where)
            .order_by(api_keys.c.created_at.desc(), api_keys.c.id)
            .offset(offset)
            .limit(limit)
        )
        count = sa.select(sa.func.count()).select_from(api_keys).where(where)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
            total = (await connection.execute(count)).scalar_one()
        return [_key(r) for r in rows], total

    async def by_prefix(self, prefix: str) -> tuple[ApiKey, str] | None:
        """The key named by ``prefix`` and its stored hash."""
        query = sa.select(api_keys).where(api_keys.c.prefix == prefix)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return (_key(row), row.secret_hash) if row is not None else None

    async def revoke(
        self, project_id: uuid.UUID, key_id: uuid.UUID, by: str, *, audit: AuditEntry
    ) -> ApiKey | None:
        """Revoke a key of ``project_id`` (a revoked one stays as it was); None: no such key."""
        where = sa.and_(api_keys.c.id == key_id, api_keys.c.project_id == project_id)
        async with self._engine.begin() as connection:
            revoked = await connection.execute(
                sa.update(api_keys)
                .where(where, api_keys.c.revoked_at.is_(None))
                .values(revoked_at=sa.func.now(), revoked_by=by)
                .returning(api_keys.c.prefix)
            )
            prefix = revoked.scalar_one_or_none()
            if prefix is not None:
                await record(connection, replace(audit, subject=prefix))
            row = (await connection.execute(sa.select(*PUBLIC_COLUMNS).where(where))).first()
        return _key(row) if row is not None else None

    async def touch(self, key_id: uuid.UUID) -> None:
        async with self._engine.begin() as connection:
            await connection.execute(
                sa.update(api_keys)
                .where(api_keys.c.id == key_id)
                .values(last_used_at=sa.func.now())
            )
