"""Every way a token must be refused, by name: the JWT matrix the unit tests run against the
token issuer and the integration tests against the HTTP API."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta

import jwt

from jobs_common.auth import Identity, TokenKeys, encode_token, issue_token

OTHER_SECRET = "another-secret-0123456789abcdef-0123456789"


def tampered(token: str, **changes: object) -> str:
    """The token with its payload changed and the original signature kept."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    raw = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{raw}.{signature}"


def _unsigned_and_without_exp(
    keys: TokenKeys, claims: Mapping[str, object], typ: str
) -> dict[str, str]:
    now = int(time.time())
    full = {**claims, "typ": typ, "iss": keys.issuer, "aud": keys.audience, "iat": now}
    return {
        "alg none": jwt.encode({**full, "exp": now + 300}, None, algorithm="none"),
        "missing exp": jwt.encode(full, keys.secret, algorithm="HS256"),
    }


def bad_access_tokens(keys: TokenKeys, identity: Identity) -> dict[str, str]:
    """Access tokens the gateway must refuse (all signed with ``keys`` unless named)."""
    minutes = timedelta(minutes=5)
    good = issue_token(identity, keys=keys, ttl=minutes)
    claims = {"sub": identity.user_id, "email": identity.email, "role": identity.role}
    return {
        **_unsigned_and_without_exp(keys, claims, "access"),
        "wrong key": issue_token(identity, keys=replace(keys, secret=OTHER_SECRET), ttl=minutes),
        "expired": issue_token(identity, keys=keys, ttl=timedelta(seconds=-5)),
        "tampered payload": tampered(good, role="admin"),
        "wrong iss": issue_token(identity, keys=replace(keys, issuer="someone-else"), ttl=minutes),
        "wrong aud": issue_token(identity, keys=replace(keys, audience="other-api"), ttl=minutes),
        "refresh token": encode_token(
            {"sub": identity.user_id, "jti": str(uuid.uuid4())},
            keys=keys,
            ttl=timedelta(days=1),
            token_type="refresh",
        ),
        "garbage": "a.b.c",
    }


def bad_refresh_tokens(keys: TokenKeys, identity: Identity, good: str) -> dict[str, str]:
    """Refresh tokens the gateway must refuse; ``good`` is a valid one to tamper with."""
    claims = {"sub": identity.user_id, "jti": str(uuid.uuid4())}

    def signed(keys: TokenKeys, ttl: timedelta = timedelta(days=1)) -> str:
        return encode_token(claims, keys=keys, ttl=ttl, token_type="refresh")

    return {
        **_unsigned_and_without_exp(keys, claims, "refresh"),
        "wrong key": signed(replace(keys, secret=OTHER_SECRET)),
        "expired": signed(keys, timedelta(seconds=-5)),
        "tampered payload": tampered(good, jti=str(uuid.uuid4())),
        "wrong iss": signed(replace(keys, issuer="someone-else")),
        "wrong aud": signed(replace(keys, audience="other-api")),
        "access token": issue_token(identity, keys=keys, ttl=timedelta(minutes=5)),
        "garbage": "a.b.c",
    }


# The matrix both suites run: what every case must get is 401.
_COMMON = ("alg none", "missing exp", "wrong key", "expired", "tampered payload", "wrong iss")
ACCESS_CASES = sorted((*_COMMON, "wrong aud", "refresh token", "garbage"))
REFRESH_CASES = sorted((*_COMMON, "wrong aud", "access token", "garbage"))
