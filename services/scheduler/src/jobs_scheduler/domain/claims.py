"""May a redelivered attempt run on the worker that received it? (a claim)

The broker redelivers a ready message when the channel that held it closed: its worker died,
or only its connection did and the worker still runs the handler (or has run it and could not
get its result confirmed; it publishes that result again once connected). Running every
redelivery, as RabbitMQ's at-least-once delivery invites, runs such a handler twice: an email
sent twice. So a redelivered attempt runs only when the scheduler's record says that no live
worker can still hold it:

- the job is at another attempt, ended, or waits for a retry: ``skip`` (the copy is acked
  and nothing runs);
- it runs on the claimant already (an earlier answer was lost): ``run``;
- it runs on another worker: ``run`` (taken over) only once that worker's lease expired by
  the read horizon (:mod:`~jobs_scheduler.domain.leases`: the scheduler has read past the
  heartbeat that would have renewed it), else ``wait``;
- no worker ever reported it (``queued``: a quick attempt sends only its result): a live
  holder lists every attempt it runs or holds a result for in each heartbeat, which starts it
  in the record. So ``run`` only once the scheduler has read heartbeats and results sent a
  lease after ``claim_since``: a holder that stayed silent that long died, or was cut off as
  long as a paused worker past its lease. Else ``wait``. ``claim_since`` is when the
  claimant first asked (a redelivery), or when the attempt was dispatched (a relay's copy:
  the first copy may run unasked until its ``fresh_until``, :data:`FRESH_DISPATCH` later,
  and is listed within a heartbeat interval of its start; so ``FRESH_DISPATCH`` plus two
  heartbeat intervals must stay under the lease). A first copy published behind a backlog
  runs unasked for longer (:func:`fresh_window`, the relay's ``FRESH_HEADER``): its copy asks
  with ``claim_since`` that much later, so the same lease covers it. None: a first delivery
  that waited past its ``fresh_until`` asks; no copy of it runs unasked, so it runs at once.

Clocks: ``claim_since`` is the worker's clock, the horizon the scheduler's (as for leases).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobs_common.contracts import FRESH_DISPATCH, ClaimAnswer

# Longest fresh window the relay gives a dispatch behind a backlog: under the ready queues'
# 60 s TTL (a message not taken by then is dead-lettered and dispatched again).
MAX_FRESH = timedelta(seconds=55)


def fresh_window(backlog: int, *, drain_per_second: float) -> timedelta:
    """How long a first delivery of a dispatch published behind ``backlog`` ready messages
    runs unasked: :data:`FRESH_DISPATCH` plus the time its queue takes to drain that backlog
    at ``drain_per_second`` (a low guess keeps more deliveries fresh; a copy of it, after a
    relay died mid-pass, waits that much longer), at most :data:`MAX_FRESH`."""
    wait = timedelta(seconds=max(0, backlog) / drain_per_second)
    return min(FRESH_DISPATCH + wait, MAX_FRESH)


# The shortest pause a ``wait`` asks for: claims are rare (faults only), asks cheap.
MIN_RETRY = 0.5
MAX_RETRY = 5.0


@dataclass(frozen=True)
class Claim:
    verdict: ClaimAnswer
    reason: str
    # ``run`` from ``queued`` starts the attempt; from another worker's ``running``, takes it over.
    write: str | None = None  # "start" | "take_over" | None
    retry_after: float | None = None


def _retry_after(*, until: datetime | None, horizon: datetime | None) -> float:
    if until is None or horizon is None:
        return MAX_RETRY / 2
    seconds = (until - horizon).total_seconds()
    return min(MAX_RETRY, max(MIN_RETRY, seconds))


def claim_verdict(
    *,
    attempt: int,
    claimant: str,
    claim_since: datetime | None,
    status: str | None,
    current_attempt: int | None,
    holder: str | None,
    lease_expires_at: datetime | None,
    horizon: datetime | None,
    lease: timedelta,
) -> Claim:
    """The answer to ``claimant`` asking to run ``attempt`` of a job whose row reads
    ``status`` / ``current_attempt`` / ``holder`` / ``lease_expires_at`` (locked), with the
    scheduler's read ``horizon`` (None: some queue that decides leases has no live reader)."""
    if status is None:
        return Claim("skip", "the job is not recorded (pruned)")
    if current_attempt != attempt:
        return Claim("skip", f"the job is at attempt {current_attempt}")
    if status not in ("queued", "running"):
        return Claim("skip", f"the attempt is {status}")
    if status == "running":
        if holder == claimant:
            return Claim("run", "the attempt is this worker's")
        if horizon is not None and (lease_expires_at is None or lease_expires_at < horizon):
            return Claim("run", f"taken over from {holder}: its lease expired", "take_over")
        return Claim(
            "wait",
            f"running on {holder} under a live lease",
            retry_after=_retry_after(until=lease_expires_at, horizon=horizon),
        )
    if claim_since is None:
        return Claim("run", "a first delivery, the only one that runs unasked", "start")
    quiet_until = claim_since + lease
    if horizon is not None and horizon >= quiet_until:
        return Claim("run", "no worker reported the attempt within a lease", "start")
    return Claim(
        "wait",
        "no worker reported the attempt yet; a live holder would within a lease",
        retry_after=_retry_after(until=quiet_until, horizon=horizon),
    )
