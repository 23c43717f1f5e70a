"""What a committed transaction did, counted: status transitions and the job outcome series.

Called once per transaction, after its commit (``api/queues.py`` for message batches,
``api/sweeps.py`` for sweeps), from the side rows the transaction gathered in :class:`Changes`: a
batch rolled back and applied again is counted once, and a stale message nothing.

- ``jobs_succeeded_total{type}``: moves into ``succeeded``;
- ``jobs_failed_total{type,terminal}``: moves out of ``failed`` (every failed attempt passes
  through ``failed`` once): to ``scheduled`` or ``queued`` it will be retried
  (``terminal="false"``), anywhere else the failure ended the job (``terminal="true"``);
- ``jobs_dead_total{reason}``: dead-letter rows written (one per move into ``dead``);
- ``job_queue_wait_seconds``, ``job_run_seconds``: the timings the transaction recorded.
"""

from __future__ import annotations

from collections import Counter

from jobs_common.contracts import JobStatus
from jobs_common.metrics import priority_label, type_label
from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.side_rows import Changes

S = JobStatus
RETRIED = frozenset({S.SCHEDULED.value, S.QUEUED.value})


def record_committed(changes: Changes) -> None:
    """Count ``changes`` (one increment per label set and batch: a batch has hundreds)."""
    for (from_status, to_status), count in Counter(changes.moves).items():
        metrics.TRANSITIONS.labels(from_status, to_status).inc(count)
    succeeded: Counter[str] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    for move in changes.live:  # every move, with its job's type
        if move.to_status == S.SUCCEEDED:
            succeeded[type_label(move.job_type)] += 1
        elif move.from_status == S.FAILED:
            terminal = "false" if move.to_status in RETRIED else "true"
            failed[(type_label(move.job_type), terminal)] += 1
    for job_type, count in succeeded.items():
        metrics.JOBS_SUCCEEDED.labels(job_type).inc(count)
    for (job_type, terminal), count in failed.items():
        metrics.JOBS_FAILED.labels(job_type, terminal).inc(count)
    for reason, count in Counter(dead["reason"] for dead in changes.dead).items():
        metrics.JOBS_DEAD.labels(reason).inc(count)
    for job_type, priority, waited in changes.waits:
        labels = type_label(job_type), priority_label(priority)
        metrics.JOB_QUEUE_WAIT_SECONDS.labels(*labels).observe(waited)
    for job_type, ran in changes.runs:
        metrics.JOB_RUN_SECONDS.labels(type_label(job_type)).observe(ran)
