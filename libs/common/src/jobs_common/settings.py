"""Settings bases: each service subclasses with its own env prefix (GATEWAY_, SCHEDULER_...)."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEV_SECRET = "dev-only-secret-change-me-0123456789abcdef"


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", env_nested_delimiter="__")

    environment: Literal["development", "test", "production"] = "development"
    log_level: str = "INFO"
    log_json: bool = True
    host: str = "127.0.0.1"
    port: int = 8000


class AmqpSettingsMixin(BaseSettings):
    amqp_url: str = "amqp://guest:guest@127.0.0.1:5672/"


class PostgresSettingsMixin(BaseSettings):
    database_url: str = "postgresql+asyncpg://postgres@127.0.0.1:5432/jobs"
    db_pool_size: int = 10


class InternalAuthMixin(BaseSettings):
    """Shared secret the gateway puts on every proxied call; backends refuse calls without it."""

    internal_token: str = DEV_SECRET

    @model_validator(mode="after")
    def _refuse_dev_secret_in_production(self) -> InternalAuthMixin:
        if getattr(self, "environment", "development") == "production" and (
            self.internal_token == DEV_SECRET
        ):
            raise ValueError("internal_token must be set outside development")
        return self
