"""User storage in PostgreSQL (schema ``gateway``)."""

from __future__ import annotations

import uuid
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Role
from jobs_gateway.adapters.tables import users
from jobs_gateway.adapters.tenancy import create_personal
from jobs_gateway.domain.users import User, normalize_email


def _user(row: Any) -> User:
    return User(
        id=row.id,
        email=row.email,
        password_hash=row.password_hash,
        role=cast(Role, row.role),
        created_at=row.created_at,
    )


class UserRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def by_email(self, email: str) -> User | None:
        query = sa.select(users).where(users.c.email == normalize_email(email))
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return _user(row) if row is not None else None

    async def by_id(self, user_id: uuid.UUID) -> User | None:
        query = sa.select(users).where(users.c.id == user_id)
        async with self._engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return _user(row) if row is not None else None

    async def insert_if_absent(self, *, email: str, password_hash: str, role: Role) -> User | None:
        """Insert a user with their personal organization and its default project (one
        transaction); None (and nothing changed) when the email is taken."""
        statement = (
            insert(users)
            .values(
                id=uuid.uuid4(),
                email=normalize_email(email),
                password_hash=password_hash,
                role=role,
            )
            .on_conflict_do_nothing(index_elements=[users.c.email])
            .returning(*users.c)
        )
        async with self._engine.begin() as connection:
            row = (await connection.execute(statement)).first()
            if row is not None:
                await create_personal(connection, user_id=row.id, email=row.email)
        return _user(row) if row is not None else None

    async def ping(self) -> None:
        async with self._engine.connect() as connection:
            await connection.execute(sa.text("SELECT 1"))
