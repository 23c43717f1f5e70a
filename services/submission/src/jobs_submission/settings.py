"""Settings of the submission service (environment variables prefixed ``SUBMISSION_``)."""

from __future__ import annotations

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from jobs_common.body_limit import (
    BATCH_MAX_BODY_BYTES,
    DEFAULT_MAX_BODY_BYTES,
    JOB_MAX_BODY_BYTES,
)
from jobs_common.recipients import RecipientList
from jobs_common.settings import (
    AmqpSettingsMixin,
    InternalAuthMixin,
    MongoUrl,
    OptionalHttpBaseUrlList,
    ServiceSettings,
)


class Settings(ServiceSettings, AmqpSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(env_prefix="SUBMISSION_", extra="ignore")

    port: int = 3001
    mongo_url: MongoUrl = Field(default="mongodb://127.0.0.1:27017", repr=False)  # a password
    mongo_db: str = "jobs_submission"

    # Request bodies (jobs_common.body_limit, api/limits.py): 413 above these.
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=0)
    max_job_body_bytes: int = Field(default=JOB_MAX_BODY_BYTES, ge=0)  # POST /api/v1/jobs
    max_batch_body_bytes: int = Field(default=BATCH_MAX_BODY_BYTES, ge=0)  # POST /api/v1/batches

    # Email abuse (domain/quota.py, docs/submission.md): at most email_quota email jobs per
    # caller per fixed window of email_quota_window_seconds (0: no quota; admins exempt unless
    # email_quota_exempt_admins is false), and recipients only from email_allowed_recipients
    # (addresses and/or domains, comma-separated; empty allows all).
    email_quota: int = Field(default=100, ge=0)
    email_quota_window_seconds: int = Field(default=3600, ge=1, le=31 * 86_400)
    email_quota_exempt_admins: bool = True
    email_allowed_recipients: RecipientList = []

    # A project's quotas (docs/flow-control.md, "Quotas"): asked of the scheduler, which owns
    # them, at most every project_quota_refresh_seconds per project with a waiting quota (its
    # waiting count), every project_quota_idle_seconds for another (a quota set takes effect
    # within that). Empty: no project quota is enforced.
    scheduler_urls: OptionalHttpBaseUrlList = ["http://127.0.0.1:8080"]
    project_quota_refresh_seconds: float = Field(default=1.0, gt=0, le=60)
    project_quota_idle_seconds: float = Field(default=5.0, gt=0, le=300)

    # Single submissions arriving while an insert is in flight go in the next one, together
    # (adapters/group_insert.py): at most this many documents per insert.
    insert_batch_max: int = Field(default=256, ge=1, le=5000)
    # A submission document goes this many days after its publish was confirmed (a TTL index
    # on publishedAt; 0: kept), an accepted batch's document as long after its acceptance
    # (on acceptedAt): an Idempotency-Key replays its job or batch within that window, and
    # a dependency on a job submitted before it is refused as unknown, as the job itself is
    # gone from the job store by then (docs/operations.md, "Retention").
    retention_days: float = Field(default=7.0, ge=0)

    relay_enabled: bool = True
    relay_batch_size: int = Field(default=1000, ge=1, le=5000)
    relay_jobs_per_message: int = Field(default=50, ge=1, le=1000)  # JobsSubmitted size
    # Accepted jobs go to this process's relay in memory, already claimed (app/handoff.py).
    relay_handoff: bool = True
    # While hand-offs keep coming, a pass waits this long for more before it publishes.
    relay_handoff_linger_seconds: float = Field(default=0.005, ge=0, le=0.1)
    relay_message_max_bytes: int = Field(default=1_000_000, ge=1_000)
    relay_poll_interval_seconds: float = Field(default=0.5, gt=0)
    # The job type registry (app/type_registry.py): reloaded from MongoDB this often; a worker
    # counts as live for a type while it announced it within three of its announce intervals
    # (WORKER_TYPES_INTERVAL, 30 s by default: keep the two equal).
    types_refresh_seconds: float = Field(default=2.0, gt=0)
    worker_types_interval_seconds: float = Field(default=30.0, gt=0)
    relay_claim_lease_seconds: float = Field(default=30.0, gt=0)
    # Confirmed publishes are marked sent together, at most this long after (app/mark_sent.py).
    relay_settle_interval_seconds: float = Field(default=0.1, ge=0, le=5.0)
    relay_retry_base_seconds: float = Field(default=1.0, gt=0)
    relay_retry_max_seconds: float = Field(default=30.0, gt=0)
    relay_publish_timeout_seconds: float = Field(default=10.0, gt=0)
    # A batch still pending this long after it was created was abandoned while being stored:
    # relays hold its members back until a replay with its Idempotency-Key reopens them.
    relay_abandoned_batch_seconds: float = Field(default=3600.0, gt=0)
    # outbox_pending{service="submission"} counts pending entries up to this many (one bounded
    # index scan per relay pass); the limit itself means "at least this many".
    relay_pending_count_limit: int = Field(default=1000, ge=1, le=100_000)
    broker_retry_seconds: float = Field(default=2.0, gt=0)

    @model_validator(mode="after")
    def _settle_within_the_claim(self) -> Settings:
        if self.relay_settle_interval_seconds * 2 > self.relay_claim_lease_seconds:
            raise ValueError(
                "SUBMISSION_RELAY_SETTLE_INTERVAL_SECONDS must be at most half of "
                "SUBMISSION_RELAY_CLAIM_LEASE_SECONDS: entries are marked sent under their claim"
            )
        return self
