"""Settings refuse the development secrets in production."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jobs_gateway.settings import Settings

pytestmark = pytest.mark.unit

GOOD = "a-real-secret-with-enough-bytes-0123456789"


def test_production_refuses_the_dev_jwt_secret() -> None:
    with pytest.raises(ValidationError, match="jwt_secret"):
        Settings(environment="production", internal_token=GOOD)


def test_production_refuses_the_dev_internal_token() -> None:
    with pytest.raises(ValidationError, match="internal_token"):
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
    assert settings.access_token_ttl_minutes == 60
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
