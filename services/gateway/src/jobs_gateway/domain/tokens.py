"""Bearer parsing and token pairs (over jobs_common.auth's issue/verify)."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import timedelta

from jobs_common.auth import Identity, issue_token, verified, verify_token
from jobs_common.errors import Unauthorized

ACCESS = "access"
REFRESH = "refresh"


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


class VerifiedTokens:
    """Access tokens already verified, with their identity, until they expire (LRU-bounded).

    An access token's validity depends only on its signature and ``exp``, so verifying it
    again on every request (HMAC, base64, JSON: a tenth of the gateway's CPU per request)
    tells nothing new. A token is held by its full text and never past its ``exp``."""

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
    secret: str
    access_ttl: timedelta
    refresh_ttl: timedelta
    verified_access: VerifiedTokens = field(default_factory=VerifiedTokens, compare=False)

    def pair(self, identity: Identity) -> TokenPair:
        return TokenPair(
            access=issue_token(identity, secret=self.secret, ttl=self.access_ttl),
            refresh=issue_token(
                identity, secret=self.secret, ttl=self.refresh_ttl, token_type=REFRESH
            ),
            expires_in=int(self.access_ttl.total_seconds()),
        )

    def verify_access(self, token: str) -> Identity:
        return self.verify_access_until(token)[0]

    def verify_access_until(self, token: str) -> tuple[Identity, float]:
        """The identity of a valid access token and when it expires (epoch seconds); 401
        otherwise. A WebSocket holds the expiry to close itself when the token runs out."""
        entry = self.verified_access.lookup(token)
        if entry is None:
            entry = verified(token, secret=self.secret, token_type=ACCESS)
            self.verified_access.put(token, *entry)
        return entry

    def verify_refresh(self, token: str) -> Identity:
        return verify_token(token, secret=self.secret, token_type=REFRESH)
