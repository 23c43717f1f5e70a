"""Refresh-token rows in PostgreSQL (``gateway.refresh_tokens``), by jti and family.

Using a token is one guarded ``UPDATE ... WHERE used_at IS NULL ... RETURNING``: of two
concurrent uses of the same token PostgreSQL lets exactly one match (the other waits for
the row lock, then sees ``used_at`` set), so both can never succeed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_gateway.adapters.tables import refresh_tokens
from jobs_gateway.domain.sessions import StoredRefresh
from jobs_gateway.domain.tokens import IssuedRefresh

T = refresh_tokens.c


@dataclass(frozen=True)
class Rotated:
    """The old token is used and the new one stored in its family."""

    family_id: uuid.UUID
    user_id: uuid.UUID


def _stored(row: Any) -> StoredRefresh:
    return StoredRefresh(
        token_id=row.id,
        family_id=row.family_id,
        user_id=row.user_id,
        expires_at=row.expires_at,
        used_at=row.used_at,
        revoked_at=row.revoked_at,
    )


def _use_newest_instead(
    token_id: uuid.UUID,
    user_id: uuid.UUID,
    successor: IssuedRefresh,
    now: datetime,
    grace: timedelta,
) -> Any:
    """Use the family's unused token in place of ``token_id``, used less than ``grace`` ago.
    Guarded like a use: of two at once PostgreSQL lets one match (the other sees ``used_at``)."""
    family = (
        sa.select(T.family_id)
        .where(
            T.id == token_id,
            T.user_id == user_id,
            T.used_at > now - grace,
            T.revoked_at.is_(None),
        )
        .scalar_subquery()
    )
    return (
        refresh_tokens.update()
        .where(
            T.family_id == family,
            T.used_at.is_(None),
            T.revoked_at.is_(None),
            T.expires_at > now,
        )
        .values(used_at=now, replaced_by=successor.token_id)
        .returning(T.family_id, T.user_id)
    )


class RefreshTokens:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def start_family(self, token: IssuedRefresh, *, now: datetime) -> uuid.UUID:
        """Store the first token of a new family (a login); the family's id."""
        family_id = uuid.uuid4()
        async with self._engine.begin() as connection:
            await connection.execute(
                refresh_tokens.insert().values(
                    id=token.token_id,
                    family_id=family_id,
                    user_id=token.user_id,
                    issued_at=now,
                    expires_at=token.expires_at,
                )
            )
        return family_id

    async def rotate(
        self,
        token_id: uuid.UUID,
        *,
        user_id: uuid.UUID,
        successor: IssuedRefresh,
        now: datetime,
        grace: timedelta = timedelta(0),
    ) -> Rotated | StoredRefresh | None:
        """Use ``token_id`` once and store ``successor`` in its family: :class:`Rotated`.

        With a ``grace``, a token used less than that long ago whose answer was lost (the
        session cookie of a page reloaded while its refresh was out) takes the place of its
        family's newest token if that one was never used: the newest is used up instead, so
        whoever got it is detected as a replay if it is ever presented.

        When the token cannot be used (used, revoked, expired, another user's) nothing
        changes and its row is answered for the caller to decide; None when there is none."""
        use = (
            refresh_tokens.update()
            .where(
                T.id == token_id,
                T.user_id == user_id,
                T.used_at.is_(None),
                T.revoked_at.is_(None),
                T.expires_at > now,
            )
            .values(used_at=now, replaced_by=successor.token_id)
            .returning(T.family_id, T.user_id)
        )
        async with self._engine.begin() as connection:
            taken = (await connection.execute(use)).first()
            if taken is None and grace > timedelta(0):
                taken = (
                    await connection.execute(
                        _use_newest_instead(token_id, user_id, successor, now, grace)
                    )
                ).first()
            if taken is not None:
                await connection.execute(
                    refresh_tokens.insert().values(
                        id=successor.token_id,
                        family_id=taken.family_id,
                        user_id=taken.user_id,
                        issued_at=now,
                        expires_at=successor.expires_at,
                    )
                )
                return Rotated(family_id=taken.family_id, user_id=taken.user_id)
            row = (
                await connection.execute(sa.select(refresh_tokens).where(T.id == token_id))
            ).first()
        return _stored(row) if row is not None else None

    async def revoke_family(self, family_id: uuid.UUID, *, now: datetime) -> int:
        """Revoke every token of the family not revoked yet; how many were."""
        statement = (
            refresh_tokens.update()
            .where(T.family_id == family_id, T.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        async with self._engine.begin() as connection:
            return (await connection.execute(statement)).rowcount

    async def revoke_family_of(self, token_id: uuid.UUID, *, now: datetime) -> int:
        """Revoke the family ``token_id`` belongs to (any of its tokens, used or not)."""
        family = sa.select(T.family_id).where(T.id == token_id).scalar_subquery()
        statement = (
            refresh_tokens.update()
            .where(T.family_id == family, T.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        async with self._engine.begin() as connection:
            return (await connection.execute(statement)).rowcount

    async def get(self, token_id: uuid.UUID) -> StoredRefresh | None:
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(sa.select(refresh_tokens).where(T.id == token_id))
            ).first()
        return _stored(row) if row is not None else None

    async def purge_expired(self, *, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` rows expired before ``now``: an expired token is refused by
        its own ``exp`` before its row is read, so the row has nothing left to decide."""
        batch = sa.select(T.id).where(T.expires_at < now).limit(limit).scalar_subquery()
        async with self._engine.begin() as connection:
            return (
                await connection.execute(refresh_tokens.delete().where(T.id.in_(batch)))
            ).rowcount
