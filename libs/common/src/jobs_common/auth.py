"""JWT (PyJWT) and the identity the gateway passes to backends.

Tokens are HS256, always decoded with an explicit algorithm list, a required ``exp`` and the
expected issuer (``iss``) and audience (``aud``). Backends never see the client's token: the
gateway verifies it and forwards the identity in ``X-User-*`` headers together with the shared
internal token; a client's own ``X-User-*`` headers are dropped by the gateway, and a backend
refuses a call without the internal token.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import jwt
from pydantic import BaseModel, ConfigDict

from jobs_common.errors import Unauthorized

ALGORITHM = "HS256"
ACCESS = "access"
REFRESH = "refresh"
REQUIRED_CLAIMS = ["exp", "iat", "sub", "iss", "aud", "typ"]
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


@dataclass(frozen=True)
class TokenKeys:
    """What signs a token and whom it is for: ``iss`` and ``aud`` are set on issue and
    required (and compared) on decode, so a token of another issuer or audience sharing the
    secret is refused."""

    secret: str = field(repr=False)
    issuer: str
    audience: str
    # Secrets replaced by ``secret`` whose tokens are still accepted while a rotation runs.
    previous_secrets: tuple[str, ...] = field(default=(), repr=False)


def encode_token(
    claims: Mapping[str, Any],
    *,
    keys: TokenKeys,
    ttl: timedelta,
    token_type: str,
    now: datetime | None = None,
) -> str:
    """A signed token carrying ``claims`` plus ``typ``, ``iss``, ``aud``, ``iat`` and ``exp``."""
    issued = now or datetime.now(UTC)
    payload = {
        **claims,
        "typ": token_type,
        "iss": keys.issuer,
        "aud": keys.audience,
        "iat": issued,
        "exp": issued + ttl,
    }
    return jwt.encode(payload, keys.secret, algorithm=ALGORITHM)


def decode_token(
    token: str, *, keys: TokenKeys, token_type: str, verify_exp: bool = True
) -> dict[str, Any]:
    """The claims of a token signed with ``keys`` (HS256 only), issued by and for them, of
    ``token_type``, with ``exp``, ``iat`` and ``sub``; :class:`Unauthorized` otherwise.
    ``verify_exp=False`` still requires ``exp`` but accepts it in the past (logout)."""
    claims: dict[str, Any] | None = None
    for secret in (keys.secret, *keys.previous_secrets):
        try:
            claims = jwt.decode(
                token,
                secret,
                algorithms=[ALGORITHM],
                issuer=keys.issuer,
                audience=keys.audience,
                options={"require": REQUIRED_CLAIMS, "verify_exp": verify_exp},
            )
            break
        except jwt.InvalidSignatureError:
            continue  # signed with another secret: maybe one being rotated out
        except jwt.ExpiredSignatureError as exc:
            raise Unauthorized("token expired") from exc
        except jwt.InvalidTokenError as exc:
            raise Unauthorized("invalid token") from exc
    if claims is None:
        raise Unauthorized("invalid token")
    if claims.get("typ") != token_type or not isinstance(claims.get("sub"), str):
        raise Unauthorized("invalid token")
    return claims


def issue_token(
    identity: Identity,
    *,
    keys: TokenKeys,
    ttl: timedelta,
    token_type: str = ACCESS,
    now: datetime | None = None,
) -> str:
    """An access token: the identity (``sub``, ``email``, ``role``) the gateway forwards."""
    claims = {"sub": identity.user_id, "email": identity.email, "role": identity.role}
    return encode_token(claims, keys=keys, ttl=ttl, token_type=token_type, now=now)


def verified(token: str, *, keys: TokenKeys, token_type: str = ACCESS) -> tuple[Identity, float]:
    """The identity a valid token carries and its expiry (epoch seconds); 401 otherwise."""
    claims = decode_token(token, keys=keys, token_type=token_type)
    email, role = claims.get("email"), claims.get("role")
    if not isinstance(email, str) or role not in ("admin", "user"):
        raise Unauthorized("invalid token")
    identity = Identity(user_id=claims["sub"], email=email, role=role)
    return identity, float(claims["exp"])


def verify_token(token: str, *, keys: TokenKeys, token_type: str = ACCESS) -> Identity:
    return verified(token, keys=keys, token_type=token_type)[0]


def identity_from_headers(
    headers: dict[str, str], *, internal_token: str, previous: Sequence[str] = ()
) -> Identity:
    """The identity a backend trusts: only with the gateway's internal token (or, while a
    rotation runs, one of the ``previous`` tokens). An empty token is never accepted."""
    presented = headers.get(INTERNAL_TOKEN_HEADER, "").encode()
    accepted = [token.encode() for token in (internal_token, *previous) if token]
    # every comparison runs, so the time taken does not tell which token nearly matched
    matches = [hmac.compare_digest(presented, token) for token in accepted]
    if not presented or not any(matches):
        raise Unauthorized("missing or invalid internal credentials")
    email, role = headers.get(USER_EMAIL_HEADER), headers.get(USER_ROLE_HEADER)
    if not email or role not in ("admin", "user"):
        raise Unauthorized("missing identity")
    return Identity(user_id=headers.get(USER_ID_HEADER, email), email=email, role=role)
