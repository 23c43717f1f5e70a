"""JWT (PyJWT) and the identity the gateway passes to backends.

Tokens are HS256, always decoded with an explicit algorithm list and a required ``exp``.
Backends never see the client's token: the gateway verifies it and forwards the identity in
``X-User-*`` headers together with the shared internal token; a client's own ``X-User-*``
headers are dropped by the gateway, and a backend refuses a call without the internal token.
"""

from __future__ import annotations

import hmac
from datetime import UTC, datetime, timedelta
from typing import Literal

import jwt
from pydantic import BaseModel, ConfigDict

from jobs_common.errors import Unauthorized

ALGORITHM = "HS256"
USER_EMAIL_HEADER = "x-user-email"
USER_ROLE_HEADER = "x-user-role"
USER_ID_HEADER = "x-user-id"
INTERNAL_TOKEN_HEADER = "x-internal-token"
IDENTITY_HEADERS = (USER_EMAIL_HEADER, USER_ROLE_HEADER, USER_ID_HEADER, INTERNAL_TOKEN_HEADER)

Role = Literal["admin", "user"]


class Identity(BaseModel):
    model_config = ConfigDict(frozen=True)

    user_id: str
    email: str
    role: Role

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def may_see(self, owner: str) -> bool:
        return self.is_admin or owner.lower() == self.email.lower()

    def headers(self, internal_token: str) -> dict[str, str]:
        return {
            USER_ID_HEADER: self.user_id,
            USER_EMAIL_HEADER: self.email,
            USER_ROLE_HEADER: self.role,
            INTERNAL_TOKEN_HEADER: internal_token,
        }


def issue_token(
    identity: Identity, *, secret: str, ttl: timedelta, token_type: str = "access"
) -> str:
    now = datetime.now(UTC)
    claims = {
        "sub": identity.user_id,
        "email": identity.email,
        "role": identity.role,
        "typ": token_type,
        "iat": now,
        "exp": now + ttl,
    }
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_token(token: str, *, secret: str, token_type: str = "access") -> Identity:
    return verified(token, secret=secret, token_type=token_type)[0]


def verified(token: str, *, secret: str, token_type: str = "access") -> tuple[Identity, float]:
    """The identity a valid token carries and its expiry (epoch seconds); 401 otherwise."""
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            options={"require": ["exp", "iat", "sub"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise Unauthorized("token expired") from exc
    except jwt.InvalidTokenError as exc:
        raise Unauthorized("invalid token") from exc
    if claims.get("typ") != token_type or claims.get("role") not in ("admin", "user"):
        raise Unauthorized("invalid token")
    identity = Identity(user_id=claims["sub"], email=claims["email"], role=claims["role"])
    return identity, float(claims["exp"])


def identity_from_headers(headers: dict[str, str], *, internal_token: str) -> Identity:
    """The identity a backend trusts: only with the gateway's internal token."""
    presented = headers.get(INTERNAL_TOKEN_HEADER, "")
    if not hmac.compare_digest(presented.encode(), internal_token.encode()):
        raise Unauthorized("missing or invalid internal credentials")
    email, role = headers.get(USER_EMAIL_HEADER), headers.get(USER_ROLE_HEADER)
    if not email or role not in ("admin", "user"):
        raise Unauthorized("missing identity")
    return Identity(user_id=headers.get(USER_ID_HEADER, email), email=email, role=role)
