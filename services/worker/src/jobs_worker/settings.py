"""Worker settings (env prefix ``WORKER_``), built in the entrypoint and passed in."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from jobs_common.acks import AckPolicy
from jobs_common.recipients import RecipientList
from jobs_common.settings import (
    AmqpSettingsMixin,
    EntryList,
    PostgresSettingsMixin,
    ServiceSettings,
)
from jobs_common.topology import is_lane


class Settings(ServiceSettings, AmqpSettingsMixin, PostgresSettingsMixin):
    model_config = SettingsConfigDict(env_prefix="WORKER_", extra="ignore")

    port: int = 9100
    worker_id: str | None = None

    prefetch_high: int = Field(default=20, ge=1)
    prefetch_medium: int = Field(default=10, ge=1)
    prefetch_low: int = Field(default=5, ge=1)
    # Each served type's lane (jobs.lane.<type>): jobs of a type that some workers of its queue
    # do not serve (during a deploy) come there, to the workers that serve it.
    prefetch_lane: int = Field(default=5, ge=1)

    # Handler modules to import (comma-separated), beside the jobs_platform.handlers entry
    # points (the built-in types are some) unless handler_entry_points is false.
    handler_modules: EntryList = []
    # Named queues this worker consumes (comma-separated); empty: every queue its handlers
    # name. Every worker of a queue must serve every type of that queue (docs/sdk.md).
    queues: EntryList = []
    handler_entry_points: bool = True
    # Threads that run sync (def) handlers: at most this many at once on this worker.
    sync_handler_threads: int = Field(default=8, ge=1, le=256)

    drain_timeout: float = Field(default=30.0, ge=0)
    burst: bool = False
    startup_timeout: float = Field(default=60.0, ge=0)
    # A delivery whose JobRunning/JobResult publish is not confirmed is handed back after a
    # pause doubling from requeue_pause to requeue_pause_max, at most max_requeues times by
    # this worker; then it is rejected to jobs.dead, where the scheduler decides (re-dispatch
    # or dead). The usual cause is the broker refusing publishes, hence a generous bound.
    requeue_pause: float = Field(default=1.0, ge=0)
    requeue_pause_max: float = Field(default=30.0, ge=0)
    max_requeues: int = Field(default=20, ge=0)
    # Message ids whose requeue count this worker remembers (least recently requeued go first).
    requeue_counts_capacity: int = Field(default=10_000, ge=1)

    # How often the worker announces its job types on jobs.types (the registry's liveness).
    types_interval: float = Field(default=30.0, gt=0)
    # Heartbeats (jobs.heartbeat): the scheduler's lease lasts a few intervals.
    heartbeat_interval: float = Field(default=2.0, gt=0)
    # An attempt that ends sooner sends no JobRunning, only its JobResult (a message less per
    # job); one that runs longer is announced then. 0 announces every attempt before it runs.
    running_report_delay: float = Field(default=0.2, ge=0, le=2.0)
    # A redelivered attempt runs only when the scheduler grants its claim (docs/worker.md):
    # an ask unanswered this long is asked again; between asks the worker pauses this long
    # (or as long as a ``wait`` answer says).
    claim_answer_timeout: float = Field(default=5.0, gt=0)
    claim_retry_pause: float = Field(default=1.0, gt=0)
    # A result the broker did not confirm is kept and published again, the pause doubling from
    # requeue_pause up to this (never handed back for another run).
    result_retry_pause_max: float = Field(default=5.0, gt=0)
    # Results that became ready while the previous JobResults message waited for its confirm
    # go out together, at most this many to a message.
    result_batch_size: int = Field(default=200, ge=1, le=1000)
    # CancelAttempt messages remembered so a cancelled attempt is never started here.
    cancelled_capacity: int = Field(default=10_000, ge=1)
    cancelled_ttl: float = Field(default=3600.0, gt=0)
    # Handler log lines shipped to jobs.logs (at this level and above).
    job_log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Handler log lines also written to the worker's own log (at this level and above).
    job_log_local_level: Literal["debug", "info", "warning", "error"] = "warning"
    job_log_queue_size: int = Field(default=10_000, ge=1)
    job_log_batch_size: int = Field(default=200, ge=1, le=1_000)  # lines per message
    job_log_linger: float = Field(default=0.05, ge=0, le=1.0)  # seconds a message waits to fill
    job_log_flush_timeout: float = Field(default=5.0, ge=0)

    db_pool_size: int = Field(default=2, ge=1)
    artifacts_dir: Path = Path("var/artifacts")
    report_inline_limit: int = Field(default=64 * 1024, ge=0)
    max_image_pixels: int = Field(default=40_000_000, ge=1)

    smtp_host: str = "127.0.0.1"
    smtp_port: int = 1025
    smtp_from: str = "jobs@localhost"
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    smtp_starttls: bool = False
    smtp_timeout: float = Field(default=10.0, gt=0)
    # Recipients the email handler may send to: addresses and/or domains, comma-separated
    # (jobs_common.recipients); empty allows all. Anyone else fails the job, not retried.
    email_allowed_recipients: RecipientList = []

    @model_validator(mode="after")
    def _credentials_in_pairs(self) -> Settings:
        if (self.smtp_username is None) != (self.smtp_password is None):
            raise ValueError("smtp_username and smtp_password must be set together")
        return self

    @property
    def ack_policy(self) -> AckPolicy:
        return AckPolicy(
            max_requeues=self.max_requeues,
            pause=self.requeue_pause,
            max_pause=self.requeue_pause_max,
        )

    @property
    def concurrency(self) -> int:
        """How many deliveries this worker runs at once at most (sum of the prefetches)."""
        return self.prefetch_high + self.prefetch_medium + self.prefetch_low

    def prefetch_for(self, queue: str) -> int:
        """The prefetch of a ready queue by its priority (a named queue's too; a lane's)."""
        if is_lane(queue):
            return self.prefetch_lane
        return {
            "high": self.prefetch_high,
            "medium": self.prefetch_medium,
            "low": self.prefetch_low,
        }[queue.rpartition(".")[2]]
