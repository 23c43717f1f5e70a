"""Scheduler settings (env prefix SCHEDULER_)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from jobs_common.acks import AckPolicy
from jobs_common.contracts import RetryStrategy
from jobs_common.retry_defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_RETRY, DEFAULT_TIMEOUT_SECONDS
from jobs_common.settings import (
    AmqpSettingsMixin,
    InternalAuthMixin,
    PostgresSettingsMixin,
    ServiceSettings,
)


class Settings(ServiceSettings, AmqpSettingsMixin, PostgresSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(env_prefix="SCHEDULER_", extra="ignore")

    port: int = 8080
    # Names this replica in read_horizons (default: host, pid and a random suffix).
    replica_id: str | None = None
    migrate_on_start: bool = True

    # Job defaults when a submission does not say.
    default_max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1)
    max_attempts_by_type: dict[str, int] = {}
    default_timeout_seconds: int = Field(default=DEFAULT_TIMEOUT_SECONDS, ge=1)
    # RabbitMQ closes a channel whose delivery stays unacked past consumer_timeout (30 min);
    # an attempt must end well before it.
    max_timeout_seconds: int = 1_700
    # How long past its timeout a running attempt may stay silent before the reaper acts.
    timeout_grace_seconds: int = 10

    # Retry backoff (jobs_common.retry_defaults: exponential, 1 s doubling up to 60 s, jitter).
    retry_strategy: RetryStrategy = DEFAULT_RETRY.strategy
    retry_base_delay_ms: int = DEFAULT_RETRY.base_delay_ms
    retry_multiplier: float = DEFAULT_RETRY.multiplier
    retry_max_delay_ms: int = DEFAULT_RETRY.max_delay_ms
    retry_jitter: bool = DEFAULT_RETRY.jitter

    # A ready message that expires unconsumed (60 s TTL: the workers are busy, or none consume
    # its queue) goes to the back of its queue again, this many times (a day of backlog);
    # then the job is dead with reason ttl_expired, and can be requeued.
    ttl_redispatch_limit: int = 1_440

    # Leases: renewed by worker heartbeats (every ~2 s); a lease this long survives a few
    # missed heartbeats. A job whose attempts keep losing their lease is poison.
    lease_seconds: int = 10
    # Dispatch a job only where a live worker serves its type (domain/routing.py): to its
    # queue, to its type's lane, or nowhere (it waits, and is dispatched every
    # waiting_interval_seconds once a worker serving it is live). False: each to its queue.
    route_by_live_workers: bool = True
    waiting_interval_seconds: float = Field(default=1.0, gt=0)
    poison_threshold: int = 3
    # Leases are judged against how far the scheduler has read its queues (read horizon),
    # advanced by ticks this replica publishes into them this often.
    tick_interval_seconds: float = 0.5
    # A replica whose horizon rows are older than this (it died, or froze long enough for
    # the broker to close its connection and requeue its deliveries: 60 s by default) holds
    # reaping back no longer.
    horizon_stale_seconds: float = 90.0
    # How often this replica checks that it still consumes each of its queues; a consumer
    # gone at two checks in a row is consumed again on a new channel (api/queues.py).
    consumer_mend_interval_seconds: float = Field(default=2.0, gt=0)
    # Per-type retry policy defaults (JSON: {"email": {"strategy": "fixed", ...}}).
    retry_policy_by_type: dict[str, dict[str, Any]] = {}

    # Retention (docs/operations.md, "Retention"): finished jobs go with their attempts,
    # events and log lines this many days after they finished (0: kept forever); an
    # unresolved dead letter keeps its job. The inbox's command ids go after the window in
    # which a command can be redelivered; poison messages and the dead-letter audit log after
    # theirs. Pruned every interval, at most a batch per table per transaction.
    retention_succeeded_days: float = Field(default=7.0, ge=0)
    retention_cancelled_days: float = Field(default=7.0, ge=0)
    retention_dead_days: float = Field(default=30.0, ge=0)
    retention_inbox_days: float = Field(default=7.0, gt=0)
    retention_poison_days: float = Field(default=30.0, ge=0)
    retention_audit_days: float = Field(default=90.0, ge=0)
    retention_interval_seconds: float = Field(default=60.0, gt=0)
    retention_batch_size: int = Field(default=1_000, ge=1, le=50_000)
    # After a pass drained (docs/operations.md, "After a prune"): the tables it pruned are
    # analyzed, and vacuumed by the scheduler (one replica at a time) where autovacuum is off
    # for the server or the table, or behind: at least vacuum_dead_rows dead rows and more
    # than vacuum_dead_ratio of the live ones; every store_stats_interval_seconds, also any
    # table past that threshold autovacuum does not look after (updates, the rollup fold).
    # False: analyze only, and log what needs a vacuum (an operator who runs VACUUM elsewhere).
    vacuum_after_prune: bool = True
    vacuum_dead_rows: int = Field(default=100_000, ge=1)
    vacuum_dead_ratio: float = Field(default=0.2, ge=0)
    # How often the jobstore_dead_rows and jobstore_autovacuum_enabled gauges (and /ready's
    # autovacuum warning) are refreshed from pg_stat_user_tables.
    store_stats_interval_seconds: float = Field(default=60.0, gt=0)
    # Where pruned jobs are written first, as gzip JSON lines, a file per hour and replica
    # (docs/operations.md, "Archive"); unset: they are not archived.
    archive_dir: Path | None = None
    # Rollups (docs/dashboard.md, "Analytics from rollups"): the deltas the triggers on jobs
    # append are folded into the per-minute and per-hour rollups this often, at most a batch
    # per transaction. Reads add what is not folded yet, so this bounds their work, not
    # their accuracy.
    rollup_interval_seconds: float = Field(default=2.0, gt=0)
    rollup_batch_size: int = Field(default=10_000, ge=1, le=100_000)
    # Queue samples (docs/flow-control.md, "Depth and the last hour"): this often each replica
    # samples every queue's jobs waiting and running unless the current minute is sampled
    # already (by it or another replica), so a minute's sample is taken within this of its
    # start. At most 60, or minutes go unsampled.
    queue_sample_interval_seconds: float = Field(default=10.0, gt=0, le=60)

    # Loops.
    relay_batch_size: int = 500
    relay_interval_seconds: float = 0.25
    # The bounded ready window (docs/flow-control.md, "Fair dispatch"): the relay keeps at most
    # this many ready messages in each ready queue and the rest in the outbox, where pause,
    # limits and fair dispatch between projects act on them. Enough for the workers to drain
    # between two relay passes; 0 sends every dispatch at once (no fairness).
    ready_window: int = Field(default=1_000, ge=0, le=1_000_000)
    # The rate (jobs/s) the relay assumes a ready queue drains at when it sizes a dispatch's
    # fresh window from the backlog ahead of it (domain/claims.py, fresh_window): a delivery
    # within its window runs unasked, a later one is claimed first. Lower keeps more deliveries
    # fresh; a relay copy (after a relay died mid-pass) waits past its first copy's window.
    fresh_drain_per_second: float = Field(default=100.0, gt=0)
    sweep_batch_size: int = 500
    promotion_interval_seconds: float = 0.25
    reaper_interval_seconds: float = 1.0
    dependency_interval_seconds: float = 0.25
    reconcile_interval_seconds: float = 5.0
    # A queued job whose ready message the broker confirmed this long ago, neither consumed
    # nor dead-lettered (the ready TTL is 60 s), was lost by the broker.
    reconcile_after_seconds: float = 120.0
    cron_interval_seconds: float = 0.5

    # Consumers: messages per transaction, and each consumer's prefetch. The default prefetch
    # is two batches (one being applied, the next gathering), so no delivery waits in this
    # process longer than a batch takes; the rest waits in the broker, where it is visible.
    consumer_batch_size: int = 200
    consumer_batch_wait_seconds: float = 0.01
    # Submissions (jobs.submitted) are recorded this many bytes of messages per transaction at
    # most (about 700 bytes a job): a batch of thousands committed in one transaction kept
    # every worker idle until all of it was recorded; in parts, the relay dispatches the first
    # while the next are recorded.
    intake_batch_bytes: int = Field(default=128_000, ge=1_000)
    consumer_prefetch: int | None = None
    # A message whose handling keeps failing (not poison) is requeued after a pause doubling
    # from the first to the max (the consumer waits meanwhile), at most this many times per
    # replica; then it is stored in poison_messages (reason requeue_limit) and dropped.
    consumer_max_requeues: int = Field(default=10, ge=0)
    consumer_requeue_pause_seconds: float = Field(default=1.0, ge=0)
    consumer_requeue_pause_max_seconds: float = Field(default=10.0, ge=0)
    # Message ids whose requeue count each consumer remembers (least recently requeued go first).
    consumer_requeue_counts_capacity: int = Field(default=10_000, ge=1)

    @property
    def effective_prefetch(self) -> int:
        return self.consumer_prefetch or 2 * self.consumer_batch_size

    @property
    def ack_policy(self) -> AckPolicy:
        return AckPolicy(
            max_requeues=self.consumer_max_requeues,
            pause=self.consumer_requeue_pause_seconds,
            max_pause=self.consumer_requeue_pause_max_seconds,
        )

    @property
    def relay_clock_slack_seconds(self) -> float:
        """A dispatch that waited longer than this in the outbox has its reconciler clock
        restarted once published: a tenth of ``reconcile_after_seconds``, at most 5 s."""
        return min(5.0, self.reconcile_after_seconds / 10)
