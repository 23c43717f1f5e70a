"""JWT (PyJWT) and the identity the gateway passes to backends.

Tokens are HS256, always decoded with an explicit algorithm list, a required ``exp`` and the
expected issuer (``iss``) and audience (``aud``). Backends never see the client's token: the
gateway verifies it and forwards the identity in ``X-User-*`` headers together with the shared
internal token; a client's own ``X-User-*`` headers are dropped by the gateway, and a backend
refuses a call without the internal token.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import jwt
from pydantic import BaseModel, ConfigDict

from jobs_common.errors import Forbidden, NotFound, Unauthorized
from jobs_common.tenancy import OrgRole, Scope, personal_project_id

ALGORITHM = "HS256"
ACCESS = "access"
REFRESH = "refresh"
REQUIRED_CLAIMS = ["exp", "iat", "sub", "iss", "aud", "typ"]
USER_EMAIL_HEADER = "x-user-email"
USER_ROLE_HEADER = "x-user-role"
USER_ID_HEADER = "x-user-id"
INTERNAL_TOKEN_HEADER = "x-internal-token"
# The project a request acts in, the caller's role there, the projects the caller may read
# (``<id>=<role>`` pairs, comma-separated) and the API key acting, if one: set by the gateway
# (docs/tenancy.md), never taken from a client.
PROJECT_ID_HEADER = "x-user-project-id"
PROJECT_ROLE_HEADER = "x-user-project-role"
PROJECT_GRANTS_HEADER = "x-user-project-grants"
API_KEY_HEADER = "x-user-api-key"
IDENTITY_HEADERS = (
    USER_EMAIL_HEADER,
    USER_ROLE_HEADER,
    USER_ID_HEADER,
    INTERNAL_TOKEN_HEADER,
    PROJECT_ID_HEADER,
    PROJECT_ROLE_HEADER,
    PROJECT_GRANTS_HEADER,
    API_KEY_HEADER,
)

Role = Literal["admin", "user"]


class Identity(BaseModel):
    """Who calls, and in which project (docs/tenancy.md).

    ``project_id``/``project_role``: the project the request acts in (the one it names, an API
    key's, or the caller's personal default project) and the caller's role there.
    ``grants``: every project the caller may read, with the role there; None for the platform
    admin (every project) and for an identity the gateway did not scope (a backend's own
    calls, tests): it reads its own rows then (:meth:`scope`). ``api_key``: the prefix of
    the API key acting, if one (it acts for its creator, ``email``, in its project only)."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    email: str
    role: Role
    project_id: str | None = None
    project_role: OrgRole | None = None
    grants: tuple[tuple[str, OrgRole], ...] | None = None
    api_key: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def actor(self) -> str:
        """Who did it, as audit rows and timelines record it: a user's email or a key."""
        return f"key:{self.api_key}" if self.api_key else self.email

    def role_in(self, project_id: str) -> OrgRole | None:
        """The caller's role in ``project_id``: None where it may not see the project (404)."""
        if self.is_admin and self.api_key is None:
            return OrgRole.OWNER
        if self.grants is None:  # not scoped by the gateway: the personal project only
            own = str(personal_project_id(self.email))
            return OrgRole.OWNER if project_id == own else None
        return dict(self.grants).get(project_id)

    def scope(self, at_least: OrgRole = OrgRole.VIEWER) -> Scope:
        """The rows the caller may act on with ``at_least`` that role (viewer: read)."""
        if self.grants is not None:
            return Scope(
                projects=frozenset(uuid.UUID(p) for p, r in self.grants if r.at_least(at_least))
            )
        if self.is_admin and self.api_key is None:
            return Scope()
        return Scope(owner=self.email)

    def require(self, project_id: str, at_least: OrgRole, *, to: str, missing: str) -> OrgRole:
        """The caller's role in ``project_id`` if at least ``at_least``: NotFound(``missing``)
        where it may not see the project (another organization's is not found), Forbidden
        where its role is lower (``to``: what it asked to do, as "retry jobs")."""
        role = self.role_in(project_id)
        if role is None:
            raise NotFound(missing)
        if not role.at_least(at_least):
            raise Forbidden(f"a {role.value} may not {to} in this project")
        return role

    def headers(self, internal_token: str) -> dict[str, str]:
        headers = {
            USER_ID_HEADER: self.user_id,
            USER_EMAIL_HEADER: self.email,
            USER_ROLE_HEADER: self.role,
            INTERNAL_TOKEN_HEADER: internal_token,
        }
        if self.project_id is not None and self.project_role is not None:
            headers[PROJECT_ID_HEADER] = self.project_id
            headers[PROJECT_ROLE_HEADER] = self.project_role.value
        if self.grants is not None:
            headers[PROJECT_GRANTS_HEADER] = ",".join(f"{p}={r.value}" for p, r in self.grants)
        if self.api_key is not None:
            headers[API_KEY_HEADER] = self.api_key
        return headers


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
    try:
        project_role = headers.get(PROJECT_ROLE_HEADER)
        grants = headers.get(PROJECT_GRANTS_HEADER)
        return Identity(
            user_id=headers.get(USER_ID_HEADER, email),
            email=email,
            role=role,
            project_id=headers.get(PROJECT_ID_HEADER),
            project_role=OrgRole(project_role) if project_role else None,
            grants=None if grants is None else parse_grants(grants),
            api_key=headers.get(API_KEY_HEADER),
        )
    except ValueError as exc:  # only the gateway sets them: a malformed one is a fault
        raise Unauthorized("malformed project headers") from exc


def parse_grants(text: str) -> tuple[tuple[str, OrgRole], ...]:
    """``<project id>=<role>`` pairs, comma-separated (the gateway's header)."""
    grants: list[tuple[str, OrgRole]] = []
    for pair in filter(None, text.split(",")):
        project, _, role = pair.partition("=")
        grants.append((str(uuid.UUID(project)), OrgRole(role)))
    return tuple(grants)
