"""Worker settings (env prefix ``WORKER_``), built in the entrypoint and passed in."""

from __future__ import annotations

import uuid
from typing import Literal, Self

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from jobs_common.acks import AckPolicy
from jobs_common.settings import (
    DEV_SECRET,
    UNSET_SECRET,
    AmqpSettingsMixin,
    EntryList,
    HttpBaseUrl,
    ServiceSettings,
    resolve_secret,
)
from jobs_common.topology import is_lane


class Settings(ServiceSettings, AmqpSettingsMixin):
    """The worker's own settings. Handlers never see them: each reads its own configuration
    (``@handler(config=...)``; the built-in ones' are in ``jobs_worker.handlers.config``)."""

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

    # How often the worker announces its job types on jobs.types (the registry's liveness),
    # and sends the schedules its handlers declare (jobs.schedules).
    types_interval: float = Field(default=30.0, gt=0)
    # The project (its id) that the schedules declared in code belong to (docs/sdk.md,
    # "Schedules in code"); unset: declared schedules are not reconciled (a warning says so).
    schedules_project: uuid.UUID | None = None
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

    # ctx.submit (docs/sdk.md, "Submitting from a handler"): the submission service the
    # follow-ups go to, as the running job's owner, with the internal token (required, as the
    # backends', when the URL is set). None: handlers cannot submit here (SubmitUnavailable).
    submission_url: HttpBaseUrl | None = None
    internal_token: str = Field(default=UNSET_SECRET, repr=False)
    submit_timeout: float = Field(default=10.0, gt=0)
    # The retry delay of an attempt whose follow-up could not be submitted (no answer, 5xx,
    # throttled without Retry-After).
    submit_retry_after: float = Field(default=5.0, ge=0, le=3600)

    @model_validator(mode="after")
    def _token_to_submit(self) -> Self:
        if self.submission_url is not None:
            self.internal_token = resolve_secret(
                self, "internal_token", self.internal_token, development=DEV_SECRET
            )
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
