"""Dashboard settings, read from ``DASHBOARD_*`` environment variables."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from jobs_common.settings import (
    AmqpSettingsMixin,
    InternalAuthMixin,
    PostgresSettingsMixin,
    ServiceSettings,
)


class Settings(ServiceSettings, PostgresSettingsMixin, AmqpSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(
        env_prefix="DASHBOARD_", extra="ignore", env_nested_delimiter="__"
    )

    port: int = 8081
    ready_timeout_seconds: float = Field(default=2.0, gt=0)
    publish_timeout_seconds: float = Field(default=5.0, gt=0)
