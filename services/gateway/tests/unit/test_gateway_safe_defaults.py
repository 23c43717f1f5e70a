"""The gateway's own secrets and demo logins by environment (issue: safe defaults)."""

from __future__ import annotations

import pytest

from jobs_common.settings import (
    DEV_JWT_SECRET,
    DEV_SECRET,
    SettingsError,
    settings_from_environment,
)
from jobs_gateway.settings import Settings

pytestmark = pytest.mark.unit

TOKEN = "an-internal-token-of-our-own-0123456789"
SIGNING = "a-jwt-secret-of-our-own-0123456789abcdef"


def load(monkeypatch: pytest.MonkeyPatch, **variables: str) -> Settings:
    for name, value in variables.items():
        monkeypatch.setenv(f"GATEWAY_{name.upper()}", value)
    return settings_from_environment(Settings)


def refusal(monkeypatch: pytest.MonkeyPatch, **variables: str) -> str:
    with pytest.raises(SettingsError) as refused:
        load(monkeypatch, **variables)
    return str(refused.value)


def test_development_takes_the_published_secrets_and_seeds_demo_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load(monkeypatch)
    assert (settings.jwt_secret, settings.internal_token) == (DEV_JWT_SECRET, DEV_SECRET)
    assert settings.seeds_demo_users
    assert not load(monkeypatch, seed_demo_users="false").seeds_demo_users


@pytest.mark.parametrize("environment", ["test", "production"])
def test_outside_development_every_secret_must_be_given(
    monkeypatch: pytest.MonkeyPatch, environment: str
) -> None:
    assert "GATEWAY_INTERNAL_TOKEN must be set" in refusal(
        monkeypatch, environment=environment, jwt_secret=SIGNING
    )
    monkeypatch.delenv("GATEWAY_JWT_SECRET")
    assert "GATEWAY_JWT_SECRET must be set" in refusal(
        monkeypatch, environment=environment, internal_token=TOKEN
    )


@pytest.mark.parametrize(
    ("jwt_secret", "expected"),
    [
        (DEV_JWT_SECRET, "GATEWAY_JWT_SECRET is a development secret"),
        (DEV_SECRET, "GATEWAY_JWT_SECRET is a development secret"),
        ("", "GATEWAY_JWT_SECRET must not be empty"),
        ("s" * 31, "GATEWAY_JWT_SECRET must be at least 32 bytes"),
        (TOKEN, "GATEWAY_JWT_SECRET must differ from GATEWAY_INTERNAL_TOKEN"),
    ],
)
def test_production_refuses_weak_jwt_secrets(
    monkeypatch: pytest.MonkeyPatch, jwt_secret: str, expected: str
) -> None:
    message = refusal(
        monkeypatch, environment="production", internal_token=TOKEN, jwt_secret=jwt_secret
    )
    assert expected in message
    if jwt_secret:
        assert jwt_secret not in message.replace(expected, "")  # the secret is never echoed


def test_equal_secrets_are_refused_in_development_too(monkeypatch: pytest.MonkeyPatch) -> None:
    message = refusal(monkeypatch, internal_token=SIGNING, jwt_secret=SIGNING)
    assert "GATEWAY_JWT_SECRET must differ from GATEWAY_INTERNAL_TOKEN" in message


def test_a_short_jwt_secret_is_refused_in_development(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "GATEWAY_JWT_SECRET must be at least 32 bytes" in refusal(monkeypatch, jwt_secret="x")


def test_demo_users_are_refused_outside_development(monkeypatch: pytest.MonkeyPatch) -> None:
    production = {"environment": "production", "internal_token": TOKEN, "jwt_secret": SIGNING}
    settings = load(monkeypatch, **production)
    assert settings.seed_demo_users is None and not settings.seeds_demo_users
    assert "GATEWAY_SEED_DEMO_USERS is for development only" in refusal(
        monkeypatch, **production, seed_demo_users="true"
    )


def test_upstream_urls_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "GATEWAY_DASHBOARD_URL: " in refusal(monkeypatch, dashboard_url="dashboard:8081")
    assert load(monkeypatch, dashboard_url="http://dashboard:8081").dashboard_url == (
        "http://dashboard:8081"
    )
