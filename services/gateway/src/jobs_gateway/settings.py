"""Gateway settings (env prefix ``GATEWAY_``), built in the entrypoint and passed in."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from jobs_common.settings import (
    DEV_SECRET,
    AmqpSettingsMixin,
    InternalAuthMixin,
    PostgresSettingsMixin,
    ServiceSettings,
)

DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789abcdef"
MIN_SECRET_LENGTH = 32


class Settings(ServiceSettings, PostgresSettingsMixin, AmqpSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    port: int = 3000

    jwt_secret: str = DEV_JWT_SECRET
    access_token_ttl_minutes: int = Field(default=60, gt=0)
    refresh_token_ttl_days: int = Field(default=7, gt=0)

    submission_url: str = "http://127.0.0.1:3001"
    dashboard_url: str = "http://127.0.0.1:8081"
    upstream_timeout_seconds: float = Field(default=30.0, gt=0)
    upstream_connect_timeout_seconds: float = Field(default=5.0, gt=0)
    upstream_max_connections: int = Field(default=100, gt=0)
    ready_timeout_seconds: float = Field(default=2.0, gt=0)

    migrate_on_start: bool = True
    seed_demo_users: bool = True
    startup_timeout_seconds: float = Field(default=30.0, ge=0)

    cors_origins: list[str] = ["http://localhost:5173"]
    # The web UI's build (frontend/dist), served at / when set and built (api/ui.py).
    ui_dir: Path | None = None

    login_attempts_per_minute: int = Field(default=10, gt=0)
    rate_limit_max_keys: int = Field(default=10_000, gt=0)

    # Live events (GET /ws/events), fed by this replica's own queue on jobs.events.
    live_queue_max_length: int = Field(default=10_000, gt=0)  # broker side, oldest dropped
    ws_send_queue_size: int = Field(default=256, gt=0)  # frames waiting per connection
    ws_max_subscriptions: int = Field(default=50, gt=0)  # jobs whose lines one connection follows
    ws_max_message_bytes: int = Field(default=4_096, gt=0)  # one client frame

    @model_validator(mode="after")
    def _refuse_dev_jwt_secret_in_production(self) -> Settings:
        if self.environment == "production" and self.jwt_secret in (DEV_JWT_SECRET, DEV_SECRET):
            raise ValueError("jwt_secret must be set outside development")
        if len(self.jwt_secret.encode()) < MIN_SECRET_LENGTH:
            raise ValueError(f"jwt_secret must be at least {MIN_SECRET_LENGTH} bytes")
        return self
