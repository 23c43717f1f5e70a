"""Token checks: issue/verify pairs, expiry, signatures, token types, bearer parsing."""

from __future__ import annotations

import time
from datetime import timedelta

import jwt
import pytest

from jobs_common.auth import Identity, issue_token
from jobs_common.errors import Unauthorized
from jobs_gateway.domain.tokens import TokenIssuer, VerifiedTokens, bearer_token

pytestmark = pytest.mark.unit

SECRET = "unit-test-secret-0123456789abcdef-0123456789"
OTHER_SECRET = "another-secret-0123456789abcdef-0123456789"
ALICE = Identity(user_id="7d6c8e1e-0000-4000-8000-000000000001", email="a@x.io", role="user")


def issuer(**overrides: timedelta) -> TokenIssuer:
    return TokenIssuer(
        secret=SECRET,
        access_ttl=overrides.get("access_ttl", timedelta(minutes=60)),
        refresh_ttl=overrides.get("refresh_ttl", timedelta(days=7)),
    )


def test_pair_round_trips_both_tokens() -> None:
    pair = issuer().pair(ALICE)
    assert pair.expires_in == 3600
    assert issuer().verify_access(pair.access) == ALICE
    assert issuer().verify_refresh(pair.refresh) == ALICE
    claims = jwt.decode(pair.refresh, SECRET, algorithms=["HS256"])
    assert claims["typ"] == "refresh"
    assert claims["exp"] - claims["iat"] == 7 * 24 * 3600


def test_expired_access_token_is_refused() -> None:
    token = issue_token(ALICE, secret=SECRET, ttl=timedelta(seconds=-5))
    with pytest.raises(Unauthorized, match="expired"):
        issuer().verify_access(token)


def test_token_signed_with_another_secret_is_refused() -> None:
    token = issue_token(ALICE, secret=OTHER_SECRET, ttl=timedelta(minutes=5))
    with pytest.raises(Unauthorized, match="invalid"):
        issuer().verify_access(token)


def test_refresh_token_is_not_an_access_token_and_back() -> None:
    pair = issuer().pair(ALICE)
    with pytest.raises(Unauthorized):
        issuer().verify_access(pair.refresh)
    with pytest.raises(Unauthorized):
        issuer().verify_refresh(pair.access)


def test_unsigned_and_garbage_tokens_are_refused() -> None:
    unsigned = jwt.encode({"sub": "x", "role": "admin", "typ": "access"}, None, algorithm="none")
    for token in (unsigned, "garbage", "a.b.c", ""):
        with pytest.raises(Unauthorized):
            issuer().verify_access(token)


def test_token_without_exp_is_refused() -> None:
    token = jwt.encode(
        {"sub": ALICE.user_id, "email": ALICE.email, "role": "user", "typ": "access", "iat": 1},
        SECRET,
        algorithm="HS256",
    )
    with pytest.raises(Unauthorized):
        issuer().verify_access(token)


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
    token = tokens.pair(ALICE).access
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
        secret=SECRET,
        access_ttl=timedelta(minutes=5),
        refresh_ttl=timedelta(days=1),
        verified_access=VerifiedTokens(capacity=2),
    )
    forged = issue_token(ALICE, secret=OTHER_SECRET, ttl=timedelta(minutes=5))
    for _ in range(2):
        with pytest.raises(Unauthorized):
            tokens.verify_access(forged)
    refresh = tokens.pair(ALICE).refresh
    with pytest.raises(Unauthorized):
        tokens.verify_access(refresh)  # a refresh token is never an access token, held or not
    users = [Identity(user_id=f"u{i}", email=f"u{i}@x.io", role="user") for i in range(3)]
    held = [tokens.pair(user).access for user in users]
    for token, user in zip(held, users, strict=True):
        assert tokens.verify_access(token) == user
    assert tokens.verified_access.get(held[0]) is None  # the oldest went first
    assert tokens.verified_access.get(held[2]) == users[2]


def test_verify_access_until_gives_the_tokens_expiry_fresh_and_held() -> None:
    tokens = issuer()
    token = issue_token(ALICE, secret=SECRET, ttl=timedelta(minutes=5))
    expected = jwt.decode(token, SECRET, algorithms=["HS256"])["exp"]
    assert tokens.verify_access_until(token) == (ALICE, float(expected))  # verified
    assert tokens.verify_access_until(token) == (ALICE, float(expected))  # held
    with pytest.raises(Unauthorized, match="expired"):
        tokens.verify_access_until(issue_token(ALICE, secret=SECRET, ttl=timedelta(seconds=-5)))
