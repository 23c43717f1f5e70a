"""Settings refuse the development secrets in production."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jobs_gateway.settings import Settings

pytestmark = pytest.mark.unit

GOOD = "a-real-secret-with-enough-bytes-0123456789"


def test_production_refuses_the_dev_jwt_secret() -> None:
    with pytest.raises(ValidationError, match=r"(?i)jwt_secret"):
        Settings(environment="production", internal_token=GOOD)


def test_production_refuses_the_dev_internal_token() -> None:
    with pytest.raises(ValidationError, match=r"(?i)internal_token"):
        Settings(environment="production", jwt_secret=GOOD)


def test_short_jwt_secret_is_refused() -> None:
    with pytest.raises(ValidationError, match="at least"):
        Settings(jwt_secret="short")


def test_production_with_real_secrets_and_env_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_ENVIRONMENT", "production")
    monkeypatch.setenv("GATEWAY_JWT_SECRET", GOOD)
    monkeypatch.setenv("GATEWAY_INTERNAL_TOKEN", GOOD + "x")
    monkeypatch.setenv("GATEWAY_DASHBOARD_URL", "http://dash:8081")
    settings = Settings()
    assert settings.port == 3000
    assert settings.dashboard_url == "http://dash:8081"
    assert settings.access_token_ttl_minutes == 15
    assert settings.refresh_token_ttl_days == 7
    assert settings.cors_origins == ["http://localhost:5173"]


def test_live_event_settings_defaults_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert defaults.amqp_url == "amqp://guest:guest@127.0.0.1:5672/"
    assert (
        defaults.live_queue_max_length,
        defaults.ws_send_queue_size,
        defaults.ws_max_subscriptions,
        defaults.ws_max_message_bytes,
    ) == (10_000, 256, 50, 4_096)
    monkeypatch.setenv("GATEWAY_AMQP_URL", "amqp://u:p@rabbit:5672/jobs")
    monkeypatch.setenv("GATEWAY_LIVE_QUEUE_MAX_LENGTH", "500")
    monkeypatch.setenv("GATEWAY_WS_SEND_QUEUE_SIZE", "8")
    monkeypatch.setenv("GATEWAY_WS_MAX_SUBSCRIPTIONS", "3")
    monkeypatch.setenv("GATEWAY_WS_MAX_MESSAGE_BYTES", "1024")
    settings = Settings()
    assert settings.amqp_url == "amqp://u:p@rabbit:5672/jobs"
    assert (
        settings.live_queue_max_length,
        settings.ws_send_queue_size,
        settings.ws_max_subscriptions,
        settings.ws_max_message_bytes,
    ) == (500, 8, 3, 1024)
    with pytest.raises(ValidationError, match="ws_send_queue_size"):
        Settings(ws_send_queue_size=0)


def test_session_and_limit_defaults_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert (defaults.access_token_ttl_minutes, defaults.refresh_token_ttl_days) == (15, 7)
    assert (defaults.jwt_issuer, defaults.jwt_audience) == ("jobs-gateway", "jobs-api")
    assert (
        defaults.login_attempts_per_account_per_minute,
        defaults.login_attempts_per_address_per_minute,
        defaults.registrations_per_address_per_hour,
        defaults.api_requests_per_minute,
        defaults.api_limit_flush_seconds,
        defaults.password_hash_concurrency,
    ) == (10, 30, 10, 1200, 0.5, 2)
    monkeypatch.setenv("GATEWAY_ACCESS_TOKEN_TTL_MINUTES", "5")
    monkeypatch.setenv("GATEWAY_JWT_ISSUER", "gw")
    monkeypatch.setenv("GATEWAY_JWT_AUDIENCE", "api")
    monkeypatch.setenv("GATEWAY_API_REQUESTS_PER_MINUTE", "0")
    monkeypatch.setenv("GATEWAY_PASSWORD_HASH_CONCURRENCY", "4")
    settings = Settings()
    assert settings.access_token_ttl_minutes == 5
    assert (settings.jwt_issuer, settings.jwt_audience) == ("gw", "api")
    assert (settings.api_requests_per_minute, settings.password_hash_concurrency) == (0, 4)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("access_token_ttl_minutes", 16),
        ("access_token_ttl_minutes", 0),
        ("jwt_issuer", ""),
        ("jwt_audience", ""),
        ("api_requests_per_minute", -1),
        ("login_attempts_per_account_per_minute", 0),
        ("password_hash_concurrency", 0),
    ],
)
def test_session_and_limit_settings_out_of_range_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        Settings(**{field: value})
