"""Bearer parsing and the gateway's two tokens (over jobs_common.auth's encode/decode).

- The access token (``typ: access``, at most :data:`MAX_ACCESS_TTL`) carries the identity the
  gateway forwards; it is verified by signature, ``iss``, ``aud`` and ``exp`` alone.
- The refresh token (``typ: refresh``) carries only ``sub`` (the user id) and ``jti`` (its
  row in ``gateway.refresh_tokens``): what it may do is decided by that row and the current
  user row when it is used (app/sessions.py), never by claims frozen into it.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from jobs_common.auth import (
    ACCESS,
    REFRESH,
    Identity,
    TokenKeys,
    decode_token,
    encode_token,
    issue_token,
    verified,
)
from jobs_common.errors import Unauthorized

MAX_ACCESS_TTL = timedelta(minutes=15)


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header, or 401."""
    if not authorization:
        raise Unauthorized("missing bearer token")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("malformed authorization header")
    return token


@dataclass(frozen=True)
class TokenPair:
    access: str
    refresh: str
    expires_in: int


@dataclass(frozen=True)
class IssuedRefresh:
    """A new refresh token and what its row records."""

    token: str = field(repr=False)
    token_id: uuid.UUID
    user_id: uuid.UUID
    expires_at: datetime


@dataclass(frozen=True)
class RefreshClaims:
    user_id: uuid.UUID
    token_id: uuid.UUID


class VerifiedTokens:
    """Access tokens already verified, with their identity, until they expire (LRU-bounded).

    An access token's validity depends only on its signature, ``iss``, ``aud`` and ``exp``, so
    verifying it again on every request (HMAC, base64, JSON: a tenth of the gateway's CPU per
    request) tells nothing new. A token is held by its full text and never past its ``exp``."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._held: OrderedDict[str, tuple[Identity, float]] = OrderedDict()

    def get(self, token: str) -> Identity | None:
        entry = self.lookup(token)
        return entry[0] if entry is not None else None

    def lookup(self, token: str) -> tuple[Identity, float] | None:
        """The identity of a held token and its expiry (epoch seconds)."""
        entry = self._held.get(token)
        if entry is None:
            return None
        if time.time() >= entry[1]:
            del self._held[token]
            return None
        self._held.move_to_end(token)
        return entry

    def put(self, token: str, identity: Identity, expires: float) -> None:
        self._held[token] = (identity, expires)
        self._held.move_to_end(token)
        while len(self._held) > self.capacity:
            self._held.popitem(last=False)


@dataclass(frozen=True)
class TokenIssuer:
    keys: TokenKeys
    access_ttl: timedelta
    refresh_ttl: timedelta
    verified_access: VerifiedTokens = field(default_factory=VerifiedTokens, compare=False)

    def __post_init__(self) -> None:
        if not timedelta(0) < self.access_ttl <= MAX_ACCESS_TTL:
            raise ValueError(f"access tokens last more than 0 and at most {MAX_ACCESS_TTL}")
        if self.refresh_ttl <= timedelta(0):
            raise ValueError("refresh tokens must last more than 0")

    def access(self, identity: Identity, *, now: datetime | None = None) -> str:
        return issue_token(identity, keys=self.keys, ttl=self.access_ttl, now=now)

    def refresh(self, user_id: uuid.UUID, *, now: datetime | None = None) -> IssuedRefresh:
        """A refresh token with a new ``jti``; the caller stores its row."""
        issued = now or datetime.now(UTC)
        token_id = uuid.uuid4()
        token = encode_token(
            {"sub": str(user_id), "jti": str(token_id)},
            keys=self.keys,
            ttl=self.refresh_ttl,
            token_type=REFRESH,
            now=issued,
        )
        return IssuedRefresh(
            token=token, token_id=token_id, user_id=user_id, expires_at=issued + self.refresh_ttl
        )

    def pair(self, identity: Identity, refresh: IssuedRefresh) -> TokenPair:
        return TokenPair(
            access=self.access(identity),
            refresh=refresh.token,
            expires_in=int(self.access_ttl.total_seconds()),
        )

    def verify_access(self, token: str) -> Identity:
        return self.verify_access_until(token)[0]

    def verify_access_until(self, token: str) -> tuple[Identity, float]:
        """The identity of a valid access token and when it expires (epoch seconds); 401
        otherwise. A WebSocket holds the expiry to close itself when the token runs out."""
        entry = self.verified_access.lookup(token)
        if entry is None:
            entry = verified(token, keys=self.keys, token_type=ACCESS)
            self.verified_access.put(token, *entry)
        return entry

    def verify_refresh(self, token: str, *, allow_expired: bool = False) -> RefreshClaims:
        """The claims of a refresh token signed by and for this gateway; 401 otherwise.
        ``allow_expired``: for logout, which only ever takes rights away."""
        claims = decode_token(
            token, keys=self.keys, token_type=REFRESH, verify_exp=not allow_expired
        )
        try:
            return RefreshClaims(
                user_id=uuid.UUID(claims["sub"]), token_id=uuid.UUID(str(claims["jti"]))
            )
        except (KeyError, ValueError) as exc:
            raise Unauthorized("invalid token") from exc
