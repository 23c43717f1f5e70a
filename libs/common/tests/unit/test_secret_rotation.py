"""Rotating secrets without downtime: tokens signed with the secret being replaced, and the
internal token being replaced, stay accepted while both are configured; nothing else is."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs_common.auth import (
    INTERNAL_TOKEN_HEADER,
    USER_EMAIL_HEADER,
    USER_ROLE_HEADER,
    Identity,
    TokenKeys,
    identity_from_headers,
    issue_token,
    verify_token,
)
from jobs_common.errors import Unauthorized

pytestmark = pytest.mark.unit

OLD = "the-secret-being-rotated-out-0123456789"
NEW = "the-secret-rotated-in-0123456789abcdefgh"
OTHER = "a-secret-nobody-configured-0123456789ab"
ALICE = Identity(user_id="u1", email="alice@example.com", role="user")


def keys(secret: str, *previous: str) -> TokenKeys:
    return TokenKeys(
        secret=secret, issuer="jobs-gateway", audience="jobs-api", previous_secrets=previous
    )


def token(secret: str) -> str:
    return issue_token(ALICE, keys=keys(secret), ttl=timedelta(minutes=5))


def test_a_token_of_the_previous_secret_is_accepted_during_the_rotation() -> None:
    assert verify_token(token(OLD), keys=keys(NEW, OLD)) == ALICE
    assert verify_token(token(NEW), keys=keys(NEW, OLD)) == ALICE


def test_after_the_rotation_the_old_secret_is_refused() -> None:
    with pytest.raises(Unauthorized):
        verify_token(token(OLD), keys=keys(NEW))
    with pytest.raises(Unauthorized):
        verify_token(token(OTHER), keys=keys(NEW, OLD))


def test_an_expired_token_of_the_previous_secret_is_still_expired() -> None:
    stale = issue_token(ALICE, keys=keys(OLD), ttl=timedelta(seconds=-1))
    with pytest.raises(Unauthorized, match="expired"):
        verify_token(stale, keys=keys(NEW, OLD))


def headers(token: str | None) -> dict[str, str]:
    found = {USER_EMAIL_HEADER: "alice@example.com", USER_ROLE_HEADER: "user"}
    if token is not None:
        found[INTERNAL_TOKEN_HEADER] = token
    return found


@pytest.mark.parametrize(
    ("presented", "previous", "accepted"),
    [
        (NEW, (), True),
        (OLD, (), False),
        (OLD, (OLD,), True),
        (OTHER, (OLD,), False),
        ("", (OLD,), False),
        (None, (OLD,), False),
        ("", ("",), False),  # an empty token never matches, even an empty one configured
    ],
)
def test_backends_accept_the_internal_token_and_the_one_being_rotated_out(
    presented: str | None, previous: tuple[str, ...], accepted: bool
) -> None:
    if accepted:
        identity = identity_from_headers(headers(presented), internal_token=NEW, previous=previous)
        assert identity.email == "alice@example.com"
    else:
        with pytest.raises(Unauthorized):
            identity_from_headers(headers(presented), internal_token=NEW, previous=previous)


def test_an_empty_configured_token_matches_nothing() -> None:
    with pytest.raises(Unauthorized):
        identity_from_headers(headers(""), internal_token="")
