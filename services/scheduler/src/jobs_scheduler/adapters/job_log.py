"""What a committed transaction did to each job, as one log line per job and transaction.

The scheduler applies messages set-based, so no per-job code path logs on its own; after the
commit (next to ``job_metrics.record_committed``) each job that moved gets one INFO line
carrying its ``trace_id``, ``job_id`` and ``attempt``: filtering the logs of every service on a
trace id then shows the job's whole path, the scheduler's part included (accepted and queued,
started, finished, retried, dead). Moves of one job in one transaction share the line
(``pending -> queued``), so a quick job costs two lines here: recorded and finished.

A line costs ~20 us; at ``SCHEDULER_LOG_LEVEL=WARNING`` the loop is skipped.
"""

from __future__ import annotations

import logging
import uuid

from jobs_scheduler.adapters.side_rows import Changes, LiveChange

log = logging.getLogger(__name__)


def log_committed(changes: Changes) -> None:
    """One INFO line per job that ``changes`` moved (call only after the commit)."""
    if not changes.live or not log.isEnabledFor(logging.INFO):
        return
    by_job: dict[uuid.UUID, list[LiveChange]] = {}
    for change in changes.live:
        by_job.setdefault(change.job_id, []).append(change)
    for job_id, moves in by_job.items():
        last = moves[-1]
        path = [moves[0].from_status or "none", *(move.to_status for move in moves)]
        log.info(
            "job %s: %s (%s)",
            job_id,
            " -> ".join(path),
            last.reason,
            extra={
                "action": "job_moved",
                "job_id": str(job_id),
                "attempt": last.attempt,
                "trace_id": last.trace_id,
                "job_type": last.job_type,
                "from_status": moves[0].from_status,
                "to_status": last.to_status,
                "reason": last.reason,
            },
        )
