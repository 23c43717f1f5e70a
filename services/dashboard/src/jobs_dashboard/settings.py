"""Dashboard settings, read from ``DASHBOARD_*`` environment variables."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_settings import SettingsConfigDict

from jobs_common.body_limit import DEFAULT_MAX_BODY_BYTES, JOB_MAX_BODY_BYTES
from jobs_common.recipients import RecipientList
from jobs_common.settings import (
    AmqpSettingsMixin,
    HttpBaseUrl,
    HttpBaseUrlList,
    InternalAuthMixin,
    PostgresSettingsMixin,
    PostgresUrl,
    ServiceSettings,
)


def _unset_when_empty(value: Any) -> Any:
    """An empty variable (a template's ``KEY=``) means unset, not a URL to check."""
    return None if isinstance(value, str) and not value.strip() else value


OptionalPostgresUrl = Annotated[PostgresUrl | None, BeforeValidator(_unset_when_empty)]
OptionalHttpUrl = Annotated[HttpBaseUrl | None, BeforeValidator(_unset_when_empty)]


class Settings(ServiceSettings, PostgresSettingsMixin, AmqpSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(
        env_prefix="DASHBOARD_", extra="ignore", env_nested_delimiter="__"
    )

    port: int = 8081
    # A PostgreSQL hot standby of the job store (docs/scaling.md): every snapshot read
    # (adapters/store.py) goes there; pings, point reads and writes stay on database_url.
    # Unset: one engine. Not in repr: a URL may carry a password.
    database_read_url: OptionalPostgresUrl = Field(default=None, repr=False)
    ready_timeout_seconds: float = Field(default=2.0, gt=0)
    # The submission service, which owns the job type registry: a schedule's template or an
    # edited requeue of a type that is not built in is checked there (adapters/job_types.py).
    submission_url: HttpBaseUrl = "http://127.0.0.1:3001"
    submission_timeout_seconds: float = Field(default=5.0, gt=0)
    # The scheduler, which owns the schedules: their create, pause, resume and delete are
    # its internal API's (adapters/scheduler_api.py). Each replica's base URL (comma-
    # separated): a call goes to the first that accepts the connection.
    scheduler_urls: HttpBaseUrlList = ["http://127.0.0.1:8080"]
    scheduler_timeout_seconds: float = Field(default=10.0, gt=0)
    # Request bodies (jobs_common.body_limit, api/limits.py): 413 above these; the job limit
    # is for bodies that carry a job payload (a requeue's edit, a schedule's template).
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=0)
    max_job_body_bytes: int = Field(default=JOB_MAX_BODY_BYTES, ge=0)
    publish_timeout_seconds: float = Field(default=5.0, gt=0)
    # How long POST /api/jobs/{id}/cancel waits for the scheduler to apply the cancel.
    cancel_wait_seconds: float = Field(default=5.0, ge=0)
    cancel_poll_interval_seconds: float = Field(default=0.1, gt=0)
    # A job accepted a moment ago may not be recorded in PostgreSQL yet (it is on its way
    # through the submission outbox and the scheduler): a cancel waits this long for it.
    cancel_record_wait_seconds: float = Field(default=2.0, ge=0)
    # Schedules per owner (0: no cap), of them schedules of email jobs; admins exempt unless
    # schedule_caps_exempt_admins is false. 429 past a cap (api/schedules.py).
    max_schedules_per_user: int = Field(default=50, ge=0)
    max_email_schedules_per_user: int = Field(default=10, ge=0)
    schedule_caps_exempt_admins: bool = True
    # A schedule of email jobs fires at most once per this many seconds (0: any cron), 422
    # otherwise; admins exempt like the caps. Its fires are not counted by the email quota.
    min_email_schedule_interval_seconds: int = Field(default=900, ge=0)
    # A schedule of email jobs may send only to these addresses and/or domains (comma-
    # separated; empty allows all): 422 otherwise. The worker refuses others at run time.
    email_allowed_recipients: RecipientList = []
    # A worker whose last heartbeat is this much older than how far the scheduler has read
    # the heartbeat queue (its read horizon) is reported dead (domain/workers.py).
    worker_dead_after_seconds: float = Field(default=10.0, gt=0)
    # A scheduler replica whose read horizon has not moved for this long is not reading any
    # more (the scheduler's own rule: keep equal to SCHEDULER_HORIZON_STALE_SECONDS).
    horizon_stale_seconds: float = Field(default=90.0, gt=0)
    # Most dead letters one bulk action touches, and the pace of bulk requeues.
    bulk_limit: int = Field(default=10_000, ge=1, le=100_000)
    requeue_rate_per_second: float = Field(default=20.0, gt=0)
    # The platform gauges (queue_depth, dlq_size, worker_up...) are refreshed this often, in
    # the background; a scrape only reads them.
    gauge_refresh_interval_seconds: float = Field(default=5.0, gt=0)
    # queue_time_to_drain_seconds divides a queue's depth by its completion rate over this long.
    drain_rate_window_seconds: float = Field(default=60.0, gt=0)
    # The store health card (GET /api/store/health) warns of a job store table with at least
    # this many dead rows and more than this share of its live ones: the scheduler's "behind"
    # rule (keep equal to SCHEDULER_VACUUM_DEAD_ROWS and SCHEDULER_VACUUM_DEAD_RATIO).
    store_dead_rows_warning: int = Field(default=100_000, ge=1)
    store_dead_ratio_warning: float = Field(default=0.2, ge=0)
    # The console's charts link out (docs/dashboard.md, "Charts"): "View in Grafana" to this
    # dashboard address, and for admins the RabbitMQ management console; addresses as the
    # user's browser reaches them. Unset (the default): no link.
    grafana_url: OptionalHttpUrl = None
    rabbitmq_console_url: OptionalHttpUrl = None
