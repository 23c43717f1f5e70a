"""What each kind of move writes besides the status (``status.Write``): one declaration per
kind, used by the use case that makes the move. The next attempt's dispatch
(``NEXT_ATTEMPT``) lives with it in ``jobs.py``.

A write's SQL is built once here; the use cases pass only its per-row values (by column
name) and, for the lease arithmetic, ``lease_params``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, DateTime, Double, Integer, Text, bindparam, cast, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeEngine

from jobs_common.jobstore import jobs
from jobs_scheduler.adapters.jobs import DISPATCH_COLUMNS
from jobs_scheduler.adapters.set_based import interval_seconds, vouched
from jobs_scheduler.adapters.status import Write
from jobs_scheduler.domain.defaults import JobDefaults


def lease_params(defaults: JobDefaults) -> dict[str, Any]:
    """The parameters of the writes that set a lease or deadline."""
    return {
        "lease_seconds": defaults.lease_seconds,
        "grace_seconds": defaults.timeout_grace_seconds,
    }


_LEASE = bindparam("lease_seconds", type_=Integer())
_GRACE = bindparam("grace_seconds", type_=Integer())
_STARTED_COLUMNS: dict[str, TypeEngine[Any]] = {
    "worker_id": Text(),
    "started_at": DateTime(timezone=True),
}

# queued -> running: the attempt's worker, and its lease and deadline from its start.
START = Write(
    "started",
    columns=_STARTED_COLUMNS,
    sets=lambda r: {
        "worker_id": r.worker_id,
        "started_at": r.started_at,
        "lease_expires_at": vouched(r.started_at) + interval_seconds(_LEASE),
        "deadline_at": vouched(r.started_at) + interval_seconds(jobs.c.timeout_seconds + _GRACE),
    },
    returning=(jobs.c.priority, jobs.c.queued_at),  # the queue wait (job_queue_wait_seconds)
)

# queued -> running from a heartbeat that lists the attempt before its JobRunning was applied:
# its start time from the listing, its lease from the heartbeat.
START_LISTED = Write(
    "started_listed",
    columns={**_STARTED_COLUMNS, "renewed_at": DateTime(timezone=True)},
    sets=lambda r: {
        "worker_id": r.worker_id,
        "started_at": r.started_at,
        "lease_expires_at": vouched(r.renewed_at) + interval_seconds(_LEASE),
        "deadline_at": vouched(r.started_at) + interval_seconds(jobs.c.timeout_seconds + _GRACE),
    },
    returning=(jobs.c.priority, jobs.c.queued_at),
)

# running -> running: a redelivered attempt continues on its new worker, under a fresh lease.
TAKE_OVER = Write(
    "taken_over",
    columns=_STARTED_COLUMNS,
    sets=lambda r: {
        "worker_id": r.worker_id,
        "lease_expires_at": vouched(r.started_at) + interval_seconds(_LEASE),
    },
    guards=lambda r: (jobs.c.worker_id != r.worker_id, jobs.c.cancel_requested_at.is_(None)),
)

# queued/running -> succeeded: the result, and the attempt's worker and times.
SUCCEED = Write(
    "succeeded",
    columns={
        "result": Text(),
        "worker_id": Text(),
        "started_at": DateTime(timezone=True),
        "finished_at": DateTime(timezone=True),
    },
    sets=lambda r: {
        "result": cast(r.result, JSONB),
        "worker_id": r.worker_id,
        "started_at": func.coalesce(jobs.c.started_at, r.started_at),
        "finished_at": r.finished_at,
        "lease_expires_at": None,
        "deadline_at": None,
    },
)

# A failed attempt waits as ``scheduled`` for its retry.
RETRY_LATER = Write(
    "retry_later",
    columns={"delay_seconds": Double(), "last_error": Text(), "last_error_class": Text()},
    sets=lambda r: {
        "run_at": func.now() + interval_seconds(r.delay_seconds),
        "last_error": r.last_error,
        "last_error_class": r.last_error_class,
        "lease_expires_at": None,
        "deadline_at": None,
    },
)
DEAD = Write(
    "dead",
    columns={"last_error": Text(), "last_error_class": Text()},
    sets=lambda r: {
        "last_error": r.last_error,
        "last_error_class": r.last_error_class,
        "finished_at": func.now(),
        "lease_expires_at": None,
        "deadline_at": None,
        "run_at": None,
    },
)
CANCELLED = Write(
    "cancelled",
    sets=lambda r: {
        "finished_at": func.now(),
        "lease_expires_at": None,
        "deadline_at": None,
        "run_at": None,
    },
)

# queued -> queued under a new attempt number, which does not spend the retry budget; the
# lost message counts like one that died in the broker.
REDISPATCH_LOST = Write(
    "redispatch_lost",
    sets=lambda r: {
        "attempt": jobs.c.attempt + 1,
        "attempt_limit": jobs.c.attempt_limit + 1,
        "expired_count": jobs.c.expired_count + 1,
    },
    returning=DISPATCH_COLUMNS,
)

# queued -> queued, same attempt: no live worker serves its type, so its ready message was not
# published; it waits, with the reason, until one is live (app/waiting.py).
WAIT = Write(
    "wait",
    columns={"waiting_reason": Text(), "waiting_unsent": Boolean()},
    sets=lambda r: {"waiting_reason": r.waiting_reason, "waiting_unsent": r.waiting_unsent},
)

# queued -> queued, same attempt: a worker serving its type is live (again), or the worker it
# reached handed it back: dispatched (again) where a live worker serves the type.
REDISPATCH_SERVED = Write(
    "redispatch_served",
    sets=lambda r: {"waiting_reason": None, "waiting_unsent": None},
    returning=(*DISPATCH_COLUMNS, jobs.c.queued_at),
)

# queued -> queued, same attempt: its ready message is published again.
REDISPATCH_EXPIRED = Write(
    "redispatch_expired", sets=lambda r: {"expired_count": jobs.c.expired_count + 1}
)


def _requeue_sets(r: Any) -> dict[str, Any]:
    """A dead job runs again: a fresh attempt budget, counts reset, the payload edited or kept."""
    return {
        "attempt_limit": jobs.c.attempt + jobs.c.max_attempts,
        "expired_count": 0,
        "lost_count": 0,
        "finished_at": None,
        "payload": func.coalesce(cast(r.payload, JSONB), jobs.c.payload),
    }


# dead -> queued under the next attempt number.
REQUEUE_NOW = Write(
    "requeue_now",
    columns={"payload": Text()},
    sets=lambda r: _requeue_sets(r) | {"attempt": jobs.c.attempt + 1, "run_at": None},
    returning=DISPATCH_COLUMNS,
)
# dead -> scheduled, not before a given time (bulk requeues trickle in).
REQUEUE_LATER = Write(
    "requeue_later",
    columns={"payload": Text(), "run_at": DateTime(timezone=True)},
    sets=lambda r: _requeue_sets(r) | {"run_at": r.run_at},
)
