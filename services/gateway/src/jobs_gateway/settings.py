"""Gateway settings (env prefix ``GATEWAY_``), built in the entrypoint and passed in."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from jobs_common.body_limit import (
    AUTH_MAX_BODY_BYTES,
    BATCH_MAX_BODY_BYTES,
    DEFAULT_MAX_BODY_BYTES,
    JOB_MAX_BODY_BYTES,
)
from jobs_common.settings import (
    DEV_JWT_SECRET,
    MIN_SECRET_BYTES,
    UNSET_SECRET,
    AmqpSettingsMixin,
    HttpBaseUrl,
    InternalAuthMixin,
    NetworkList,
    PostgresSettingsMixin,
    ServiceSettings,
    env_name,
    resolve_secret,
)


class MigrationSettings(ServiceSettings, PostgresSettingsMixin):
    """What ``python -m jobs_gateway.migrate`` needs: the database and whether to seed the
    demo logins. No secret: the one-shot that migrates is not given any."""

    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    # The demo logins (domain/users.py DEMO_USERS): created in development unless false;
    # refused outside development, where `python -m jobs_gateway.manage` creates users.
    seed_demo_users: bool | None = None

    @model_validator(mode="after")
    def _demo_users_only_in_development(self) -> Self:
        if self.seed_demo_users and not self.is_development:
            raise ValueError(
                f"{env_name(self, 'seed_demo_users')} is for development only: demo logins "
                f"have published passwords"
            )
        return self

    @property
    def seeds_demo_users(self) -> bool:
        """Seed the demo logins: in development, unless turned off."""
        return self.is_development and self.seed_demo_users is not False


class Settings(MigrationSettings, AmqpSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    port: int = 3000
    # Prometheus metrics on a port of their own, on the same host (adapters/metrics_server.py); the
    # public port answers /metrics with 404. 0: no metrics server.
    metrics_port: int = Field(default=9300, ge=0, le=65_535)

    # Signs the tokens; unset in development it is DEV_JWT_SECRET (jobs_common.settings).
    jwt_secret: str = Field(default=UNSET_SECRET, repr=False)
    # While the secret is rotated: the one being replaced, still accepted on tokens it signed.
    jwt_previous_secret: str | None = Field(default=None, repr=False)
    # Access tokens: 15 minutes at most (domain/tokens.py MAX_ACCESS_TTL), more is refused.
    access_token_ttl_minutes: int = Field(default=15, gt=0, le=15)
    refresh_token_ttl_days: int = Field(default=7, gt=0)
    # Set on every token and required on decode (a token for another audience is refused).
    jwt_issuer: str = Field(default="jobs-gateway", min_length=1)
    jwt_audience: str = Field(default="jobs-api", min_length=1)

    submission_url: HttpBaseUrl = "http://127.0.0.1:3001"
    dashboard_url: HttpBaseUrl = "http://127.0.0.1:8081"
    upstream_timeout_seconds: float = Field(default=30.0, gt=0)
    upstream_connect_timeout_seconds: float = Field(default=5.0, gt=0)
    upstream_max_connections: int = Field(default=100, gt=0)
    ready_timeout_seconds: float = Field(default=2.0, gt=0)

    migrate_on_start: bool = True
    startup_timeout_seconds: float = Field(default=30.0, ge=0)

    cors_origins: list[str] = ["http://localhost:5173"]
    # The console's session cookie (api/session_cookie.py) is Secure (sent over https only)
    # unless this says otherwise; unset: Secure outside development, where the console is
    # served over plain http (make dev, the e2e stack). False: a console served over plain
    # http; anyone on the network path can then read the refresh token.
    session_cookie_secure: bool | None = None
    # A session cookie used less than this long ago, presented again, is a lost answer (a
    # page reloaded while its refresh was out), not a replay, while its session's newest token
    # is unused (adapters/refresh_tokens.py). 0: every second use is a replay.
    session_cookie_reuse_grace_seconds: float = Field(default=10.0, ge=0, le=60)
    # Reverse proxies in front of the gateway (IPs or networks, comma-separated): from these
    # peers the client address is taken from X-Forwarded-For (the nearest address not itself
    # a trusted proxy), so per-address limits count clients, not the proxy. Empty: the TCP peer.
    trusted_proxies: NetworkList = []
    # The web UI's build (frontend/dist), served at / when set and built (api/ui.py).
    ui_dir: Path | None = None

    # Request bodies (jobs_common.body_limit, api/limits.py): 413 above these. The job and
    # batch limits must be at least the submission service's, so its 422s reach the client.
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=0)
    max_auth_body_bytes: int = Field(default=AUTH_MAX_BODY_BYTES, ge=0)  # /auth/*
    max_job_body_bytes: int = Field(default=JOB_MAX_BODY_BYTES, ge=0)  # a job or its payload
    max_batch_body_bytes: int = Field(default=BATCH_MAX_BODY_BYTES, ge=0)  # /api/batches

    # Abuse limits, shared by all replicas through PostgreSQL (docs/gateway.md, "Limits").
    login_attempts_per_account_per_minute: int = Field(default=10, gt=0)
    login_attempts_per_address_per_minute: int = Field(default=30, gt=0)
    registrations_per_address_per_hour: int = Field(default=10, gt=0)
    # /api/* per user; 0 turns it off. Counted in memory, flushed every api_limit_flush_seconds.
    api_requests_per_minute: int = Field(default=1_200, ge=0)
    api_limit_flush_seconds: float = Field(default=0.5, gt=0)
    # A user's projects and roles are read at most this often per gateway process: a
    # membership change reaches every replica within it (docs/tenancy.md). API keys are
    # checked on every request.
    project_grants_cache_seconds: float = Field(default=2.0, ge=0)
    # Expired refresh tokens and ended rate-limit windows are deleted this often.
    purge_interval_seconds: float = Field(default=60.0, gt=0)
    # argon2 hashes and verifies running at once (the rest wait).
    password_hash_concurrency: int = Field(default=2, gt=0)

    # Live events (GET /ws/events), fed by this replica's own queue on jobs.events.
    live_queue_max_length: int = Field(default=10_000, gt=0)  # broker side, oldest dropped
    # The live-events queue is bound to a routing key only while someone here listens to it;
    # unbound this long after the last listener left (adapters/live.py).
    live_unbind_after_seconds: float = Field(default=30.0, ge=0)
    ws_send_queue_size: int = Field(default=256, gt=0)  # frames waiting per connection
    ws_max_subscriptions: int = Field(default=50, gt=0)  # jobs whose lines one connection follows
    ws_max_message_bytes: int = Field(default=4_096, gt=0)  # one client frame
    # A closing WebSocket's close frame waits this long behind unread frames, then it is dropped.
    ws_close_timeout_seconds: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _jwt_secret_is_a_secret(self) -> Settings:
        raw = self.jwt_secret
        internal = {self.internal_token, *self.previous_internal_tokens}
        for name, value in (("jwt_secret", raw), ("jwt_previous_secret", self.jwt_previous_secret)):
            if value not in (None, UNSET_SECRET, "") and value in internal:
                raise ValueError(
                    f"{env_name(self, name)} must differ from {env_name(self, 'internal_token')}"
                    f" and {env_name(self, 'internal_token_previous')}: a backend's token must "
                    "not sign logins"
                )
        self.jwt_secret = resolve_secret(self, "jwt_secret", raw, development=DEV_JWT_SECRET)
        if self.jwt_previous_secret is not None:
            self.jwt_previous_secret = resolve_secret(
                self, "jwt_previous_secret", self.jwt_previous_secret, development=""
            )
        if len(self.jwt_secret.encode()) < MIN_SECRET_BYTES:
            raise ValueError(
                f"{env_name(self, 'jwt_secret')} must be at least {MIN_SECRET_BYTES} bytes"
            )
        return self

    @property
    def session_cookie_is_secure(self) -> bool:
        """Mark the session cookie Secure: as set, else outside development."""
        if self.session_cookie_secure is None:
            return not self.is_development
        return self.session_cookie_secure

    @model_validator(mode="after")
    def _metrics_off_the_public_port(self) -> Settings:
        if self.metrics_port and self.metrics_port == self.port:
            raise ValueError(
                f"{env_name(self, 'metrics_port')} must differ from {env_name(self, 'port')}: "
                "the public port does not serve metrics"
            )
        return self
