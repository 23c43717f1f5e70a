"""Scheduler settings (env prefix SCHEDULER_)."""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict

from jobs_common.settings import AmqpSettingsMixin, PostgresSettingsMixin, ServiceSettings


class Settings(ServiceSettings, AmqpSettingsMixin, PostgresSettingsMixin):
    model_config = SettingsConfigDict(env_prefix="SCHEDULER_", extra="ignore")

    port: int = 8080
    migrate_on_start: bool = True

    # Job defaults when a submission does not say.
    default_max_attempts: int = 3
    max_attempts_by_type: dict[str, int] = {}
    default_timeout_seconds: int = 300
    # RabbitMQ closes a channel whose delivery stays unacked past consumer_timeout (30 min);
    # an attempt must end well before it.
    max_timeout_seconds: int = 1_700
    # How long past its timeout a running attempt may stay silent before the reaper acts.
    timeout_grace_seconds: int = 10

    # Retry backoff (exponential by default).
    retry_strategy: str = "exponential"
    retry_base_delay_ms: int = 1_000
    retry_multiplier: float = 2.0
    retry_max_delay_ms: int = 60_000
    retry_jitter: bool = True

    # A ready message that expires unconsumed is re-dispatched this many times, then dead.
    ttl_redispatch_limit: int = 10

    # Loops.
    relay_batch_size: int = 500
    relay_interval_seconds: float = 0.25
    promotion_interval_seconds: float = 0.5
    promotion_batch_size: int = 500
    reaper_interval_seconds: float = 1.0
    reaper_batch_size: int = 200

    # Consumers: messages per transaction, and the channel's prefetch.
    consumer_batch_size: int = 200
    consumer_batch_wait_seconds: float = 0.01
    consumer_prefetch: int = 1_000
