"""Role changes and deletions of users (the operator's `python -m jobs_gateway.manage`)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Role
from jobs_gateway.adapters.tables import users
from jobs_gateway.domain.users import normalize_email


class UserAdministration:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def set_role(self, *, email: str, role: Role) -> bool:
        """Give the user ``role``; False when there is no such user. Their access tokens keep
        the old role until they expire; the next refresh carries the new one."""
        statement = (
            sa.update(users).where(users.c.email == normalize_email(email)).values(role=role)
        )
        async with self._engine.begin() as connection:
            result = await connection.execute(statement)
        return result.rowcount > 0

    async def delete(self, *, email: str) -> bool:
        """Delete the user; False when there is no such user. Their next refresh is refused."""
        statement = sa.delete(users).where(users.c.email == normalize_email(email))
        async with self._engine.begin() as connection:
            result = await connection.execute(statement)
        return result.rowcount > 0
