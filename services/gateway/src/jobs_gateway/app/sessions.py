"""Sessions: token pairs on login, rotation on refresh, revocation on reuse and logout
(rules: domain/sessions.py; rows: adapters/refresh_tokens.py)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from jobs_common.errors import Unauthorized
from jobs_gateway.adapters.refresh_tokens import RefreshTokens, Rotated
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.sessions import Refusal, refusal, revokes_family
from jobs_gateway.domain.tokens import TokenIssuer, TokenPair
from jobs_gateway.domain.users import User

log = logging.getLogger(__name__)

INVALID_TOKEN = "invalid token"


@dataclass(frozen=True)
class Session:
    user: User
    tokens: TokenPair


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Sessions:
    def __init__(
        self,
        *,
        users: UserRepository,
        refresh_tokens: RefreshTokens,
        tokens: TokenIssuer,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.users = users
        self.refresh_tokens = refresh_tokens
        self.tokens = tokens
        self.clock = clock

    async def start(self, user: User) -> Session:
        """A new family for a login: an access token and its first refresh token."""
        now = self.clock()
        refresh = self.tokens.refresh(user.id, now=now)
        family_id = await self.refresh_tokens.start_family(refresh, now=now)
        log.info(
            "session started",
            extra={"action": "session_start", "user_id": str(user.id), "family_id": str(family_id)},
        )
        return Session(user, self.tokens.pair(user.identity(), refresh))

    async def refresh(self, token: str, *, grace: timedelta = timedelta(0)) -> Session:
        """Use a refresh token once: the next pair of its family, for the user as the user row
        says now (a changed role counts from here); 401 for anything else. ``grace``: a token
        used less than that long ago is taken as a lost answer, not a replay, while its
        family's newest token is unused (adapters/refresh_tokens.py; the session cookie's)."""
        claims = self.tokens.verify_refresh(token)
        now = self.clock()
        successor = self.tokens.refresh(claims.user_id, now=now)
        outcome = await self.refresh_tokens.rotate(
            claims.token_id, user_id=claims.user_id, successor=successor, now=now, grace=grace
        )
        if isinstance(outcome, Rotated):
            user = await self.users.by_id(outcome.user_id)
            if user is not None:
                return Session(user, self.tokens.pair(user.identity(), successor))
            raise await self._refused(
                Refusal.USER_GONE, family_id=outcome.family_id, user_id=claims.user_id, now=now
            )
        raise await self._refused(
            refusal(outcome, user_id=claims.user_id, now=now),
            family_id=outcome.family_id if outcome is not None else None,
            user_id=claims.user_id,
            now=now,
        )

    async def _refused(
        self, reason: Refusal, *, family_id: uuid.UUID | None, user_id: uuid.UUID, now: datetime
    ) -> Unauthorized:
        """Revoke the family when the reason says so, log, and the 401 to raise."""
        revoked = 0
        if family_id is not None and revokes_family(reason):
            revoked = await self.refresh_tokens.revoke_family(family_id, now=now)
        level = logging.WARNING if reason is Refusal.REUSED else logging.INFO
        log.log(
            level,
            "refresh refused",
            extra={
                "action": "refresh_refused",
                "reason": reason.value,
                "user_id": str(user_id),
                "family_id": str(family_id) if family_id else None,
                "revoked": revoked,
            },
        )
        return Unauthorized(INVALID_TOKEN)

    async def end(self, token: str) -> None:
        """Logout: revoke the family of ``token`` (any of its tokens, even expired or used).
        Idempotent; 401 only for a token this gateway did not sign."""
        claims = self.tokens.verify_refresh(token, allow_expired=True)
        revoked = await self.refresh_tokens.revoke_family_of(claims.token_id, now=self.clock())
        log.info(
            "session ended",
            extra={"action": "logout", "user_id": str(claims.user_id), "revoked": revoked},
        )
