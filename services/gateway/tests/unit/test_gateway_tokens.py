"""Token checks: access and refresh tokens, every way a token must be refused, the TTL bound,
the verified-token cache and bearer parsing."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import jwt
import pytest

from jobs_common.auth import Identity, TokenKeys, encode_token, issue_token
from jobs_common.errors import Unauthorized
from jobs_gateway.domain.tokens import TokenIssuer, VerifiedTokens, bearer_token

from ..forged_tokens import (
    ACCESS_CASES,
    OTHER_SECRET,
    REFRESH_CASES,
    bad_access_tokens,
    bad_refresh_tokens,
)

pytestmark = pytest.mark.unit

SECRET = "unit-test-secret-0123456789abcdef-0123456789"
KEYS = TokenKeys(secret=SECRET, issuer="jobs-gateway", audience="jobs-api")
ALICE_ID = uuid.UUID("7d6c8e1e-0000-4000-8000-000000000001")
ALICE = Identity(user_id=str(ALICE_ID), email="a@x.io", role="user")


def issuer(**overrides: timedelta) -> TokenIssuer:
    return TokenIssuer(
        keys=KEYS,
        access_ttl=overrides.get("access_ttl", timedelta(minutes=15)),
        refresh_ttl=overrides.get("refresh_ttl", timedelta(days=7)),
    )


def claims_of(token: str) -> dict[str, object]:
    decoded: dict[str, object] = jwt.decode(
        token, SECRET, algorithms=["HS256"], audience="jobs-api", issuer="jobs-gateway"
    )
    return decoded


def test_access_token_carries_identity_issuer_audience_and_a_15_minute_life() -> None:
    token = issuer().access(ALICE, now=datetime.now(UTC))
    claims = claims_of(token)
    assert (claims["typ"], claims["iss"], claims["aud"]) == ("access", "jobs-gateway", "jobs-api")
    assert (claims["sub"], claims["email"], claims["role"]) == (ALICE.user_id, "a@x.io", "user")
    assert claims["exp"] == claims["iat"] + 15 * 60  # type: ignore[operator]
    assert issuer().verify_access(token) == ALICE


def test_refresh_token_carries_only_user_and_token_id() -> None:
    issued = issuer().refresh(ALICE_ID, now=datetime.now(UTC))
    claims = claims_of(issued.token)
    assert set(claims) == {"sub", "jti", "typ", "iss", "aud", "iat", "exp"}
    assert (claims["typ"], claims["sub"], claims["jti"]) == (
        "refresh",
        str(ALICE_ID),
        str(issued.token_id),
    )
    assert claims["exp"] == claims["iat"] + 7 * 24 * 3600  # type: ignore[operator]
    verified = issuer().verify_refresh(issued.token)
    assert (verified.user_id, verified.token_id) == (ALICE_ID, issued.token_id)
    assert issuer().refresh(ALICE_ID).token_id != issued.token_id  # a new jti each time


def test_pair_combines_an_access_token_with_the_given_refresh_token() -> None:
    tokens = issuer()
    refresh = tokens.refresh(ALICE_ID)
    pair = tokens.pair(ALICE, refresh)
    assert (pair.refresh, pair.expires_in) == (refresh.token, 900)
    assert tokens.verify_access(pair.access) == ALICE


@pytest.mark.parametrize("minutes", [16, 60, 0])
def test_an_access_ttl_over_15_minutes_or_zero_is_refused(minutes: int) -> None:
    with pytest.raises(ValueError, match="at most"):
        issuer(access_ttl=timedelta(minutes=minutes))


@pytest.mark.parametrize("case", ACCESS_CASES)
def test_every_bad_access_token_is_refused(case: str) -> None:
    with pytest.raises(Unauthorized):
        issuer().verify_access(bad_access_tokens(KEYS, ALICE)[case])


def test_tokens_without_iss_or_aud_are_refused() -> None:
    now = int(time.time())
    claims = {"sub": ALICE.user_id, "email": ALICE.email, "role": "user", "typ": "access"}
    times = {"iat": now, "exp": now + 300}
    for missing in (
        {**claims, **times, "aud": "jobs-api"},
        {**claims, **times, "iss": "jobs-gateway"},
    ):
        with pytest.raises(Unauthorized):
            issuer().verify_access(jwt.encode(missing, SECRET, algorithm="HS256"))


def refresh_cases() -> dict[str, str]:
    return {
        **bad_refresh_tokens(KEYS, ALICE, issuer().refresh(ALICE_ID).token),
        "no jti": encode_token(
            {"sub": str(ALICE_ID)}, keys=KEYS, ttl=timedelta(days=1), token_type="refresh"
        ),
        "jti not a uuid": encode_token(
            {"sub": str(ALICE_ID), "jti": "x"},
            keys=KEYS,
            ttl=timedelta(days=1),
            token_type="refresh",
        ),
    }


@pytest.mark.parametrize("case", [*REFRESH_CASES, "no jti", "jti not a uuid"])
def test_every_bad_refresh_token_is_refused(case: str) -> None:
    with pytest.raises(Unauthorized):
        issuer().verify_refresh(refresh_cases()[case])


def test_logout_accepts_an_expired_refresh_token_but_nothing_forged() -> None:
    expired = issuer(refresh_ttl=timedelta(days=1)).refresh(
        ALICE_ID, now=datetime.now(UTC) - timedelta(days=2)
    )
    with pytest.raises(Unauthorized, match="expired"):
        issuer().verify_refresh(expired.token)
    assert issuer().verify_refresh(expired.token, allow_expired=True).token_id == expired.token_id
    for case in ("wrong key", "wrong iss", "wrong aud", "access token", "missing exp", "alg none"):
        with pytest.raises(Unauthorized):
            issuer().verify_refresh(refresh_cases()[case], allow_expired=True)


@pytest.mark.parametrize(
    ("header", "token"),
    [("Bearer abc.def.ghi", "abc.def.ghi"), ("bearer   tok", "tok"), ("BEARER tok ", "tok")],
)
def test_bearer_header_is_parsed(header: str, token: str) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    "header", [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc", "Bearer a b"]
)
def test_missing_or_malformed_bearer_header_is_401(header: str | None) -> None:
    with pytest.raises(Unauthorized):
        bearer_token(header)


def test_a_verified_access_token_is_not_verified_again_until_it_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens = issuer(access_ttl=timedelta(seconds=30))
    token = tokens.access(ALICE)
    decodes: list[str] = []
    decode = jwt.decode

    def counted(*args: object, **kwargs: object) -> object:
        decodes.append("decode")
        return decode(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jwt, "decode", counted)
    assert [tokens.verify_access(token) for _ in range(3)] == [ALICE] * 3
    assert len(decodes) == 1
    # Past its exp the held entry is not used: the token is verified (and refused) anew.
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 31)
    assert tokens.verified_access.get(token) is None
    tokens.verify_access(token)  # PyJWT's own clock still says valid
    assert len(decodes) == 2


def test_a_refused_token_is_not_held_and_the_cache_is_bounded() -> None:
    tokens = TokenIssuer(
        keys=KEYS,
        access_ttl=timedelta(minutes=5),
        refresh_ttl=timedelta(days=1),
        verified_access=VerifiedTokens(capacity=2),
    )
    forged = issue_token(ALICE, keys=replace(KEYS, secret=OTHER_SECRET), ttl=timedelta(minutes=5))
    for _ in range(2):
        with pytest.raises(Unauthorized):
            tokens.verify_access(forged)
    with pytest.raises(Unauthorized):
        tokens.verify_access(tokens.refresh(ALICE_ID).token)  # never an access token
    users = [Identity(user_id=f"u{i}", email=f"u{i}@x.io", role="user") for i in range(3)]
    held = [tokens.access(user) for user in users]
    for token, user in zip(held, users, strict=True):
        assert tokens.verify_access(token) == user
    assert tokens.verified_access.get(held[0]) is None  # the oldest went first
    assert tokens.verified_access.get(held[2]) == users[2]


def test_verify_access_until_gives_the_tokens_expiry_fresh_and_held() -> None:
    tokens = issuer()
    token = issue_token(ALICE, keys=KEYS, ttl=timedelta(minutes=5))
    expected = claims_of(token)["exp"]
    assert tokens.verify_access_until(token) == (ALICE, float(expected))  # type: ignore[arg-type]
    assert tokens.verify_access_until(token) == (ALICE, float(expected))  # type: ignore[arg-type]
    with pytest.raises(Unauthorized, match="expired"):
        tokens.verify_access_until(issue_token(ALICE, keys=KEYS, ttl=timedelta(seconds=-5)))
