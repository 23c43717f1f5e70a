"""jobs_common.auth: tokens name their issuer and audience and are refused for any other;
TooManyRequests carries Retry-After."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import jwt
import pytest

from jobs_common.auth import (
    Identity,
    TokenKeys,
    decode_token,
    encode_token,
    issue_token,
    verified,
)
from jobs_common.errors import TooManyRequests, Unauthorized

pytestmark = pytest.mark.unit

KEYS = TokenKeys(
    secret="common-test-secret-0123456789abcdef-01234", issuer="iss-a", audience="aud-a"
)
BOB = Identity(user_id="u-1", email="bob@x.io", role="admin")


def test_encode_sets_type_issuer_audience_and_times() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    token = encode_token(
        {"sub": "u-1"}, keys=KEYS, ttl=timedelta(minutes=5), token_type="t", now=now
    )
    claims = jwt.decode(
        token,
        KEYS.secret,
        algorithms=["HS256"],
        audience="aud-a",
        issuer="iss-a",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims == {
        "sub": "u-1",
        "typ": "t",
        "iss": "iss-a",
        "aud": "aud-a",
        "iat": int(now.timestamp()),
        "exp": int(now.timestamp()) + 300,
    }


def test_an_access_token_round_trips_with_its_expiry() -> None:
    token = issue_token(BOB, keys=KEYS, ttl=timedelta(minutes=5))
    identity, expires = verified(token, keys=KEYS)
    assert identity == BOB
    assert expires == jwt.decode(token, options={"verify_signature": False})["exp"]


@pytest.mark.parametrize(
    "other",
    [
        replace(KEYS, issuer="iss-b"),
        replace(KEYS, audience="aud-b"),
        replace(KEYS, secret="x" * 40),
    ],
    ids=["issuer", "audience", "secret"],
)
def test_a_token_of_other_keys_is_refused(other: TokenKeys) -> None:
    token = issue_token(BOB, keys=other, ttl=timedelta(minutes=5))
    with pytest.raises(Unauthorized, match="invalid token"):
        verified(token, keys=KEYS)


def test_type_and_required_claims_are_checked() -> None:
    token = encode_token({"sub": "u-1"}, keys=KEYS, ttl=timedelta(minutes=5), token_type="refresh")
    with pytest.raises(Unauthorized):
        decode_token(token, keys=KEYS, token_type="access")
    assert decode_token(token, keys=KEYS, token_type="refresh")["sub"] == "u-1"
    no_sub = encode_token({}, keys=KEYS, ttl=timedelta(minutes=5), token_type="refresh")
    with pytest.raises(Unauthorized):
        decode_token(no_sub, keys=KEYS, token_type="refresh")
    # an access token without email/role is not an identity
    with pytest.raises(Unauthorized):
        verified(
            encode_token({"sub": "u"}, keys=KEYS, ttl=timedelta(minutes=5), token_type="access"),
            keys=KEYS,
        )


def test_verify_exp_false_accepts_a_past_exp_but_still_requires_one() -> None:
    old = encode_token({"sub": "u"}, keys=KEYS, ttl=timedelta(seconds=-10), token_type="refresh")
    with pytest.raises(Unauthorized, match="expired"):
        decode_token(old, keys=KEYS, token_type="refresh")
    assert decode_token(old, keys=KEYS, token_type="refresh", verify_exp=False)["sub"] == "u"
    no_exp = jwt.encode(
        {"sub": "u", "typ": "refresh", "iss": "iss-a", "aud": "aud-a", "iat": 1},
        KEYS.secret,
        algorithm="HS256",
    )
    with pytest.raises(Unauthorized):
        decode_token(no_exp, keys=KEYS, token_type="refresh", verify_exp=False)


def test_the_secret_is_not_in_the_keys_repr() -> None:
    assert KEYS.secret not in repr(KEYS)


def test_too_many_requests_answers_retry_after_in_whole_seconds() -> None:
    error = TooManyRequests("slow down", retry_after=42)
    assert (error.status_code, error.headers()) == (429, {"Retry-After": "42"})
    assert error.envelope() == {"error": "too_many_requests", "message": "slow down", "details": []}
    assert TooManyRequests("x", retry_after=0).headers() == {"Retry-After": "1"}
    assert TooManyRequests("x").headers() == {}
    assert Unauthorized("x").headers() == {}
