"""Bearer parsing and token pairs (over jobs_common.auth's issue/verify)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from jobs_common.auth import Identity, issue_token, verify_token
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


@dataclass(frozen=True)
class TokenIssuer:
    secret: str
    access_ttl: timedelta
    refresh_ttl: timedelta

    def pair(self, identity: Identity) -> TokenPair:
        return TokenPair(
            access=issue_token(identity, secret=self.secret, ttl=self.access_ttl),
            refresh=issue_token(
                identity, secret=self.secret, ttl=self.refresh_ttl, token_type=REFRESH
            ),
            expires_in=int(self.access_ttl.total_seconds()),
        )

    def verify_access(self, token: str) -> Identity:
        return verify_token(token, secret=self.secret, token_type=ACCESS)

    def verify_refresh(self, token: str) -> Identity:
        return verify_token(token, secret=self.secret, token_type=REFRESH)
