"""Leases judged against how far the scheduler has read, never against the wall clock.

A worker renews the leases of the attempts it runs with every heartbeat. Heartbeats and
results wait in queues before the scheduler applies them; if the scheduler lags (a backlog,
a pause, a slow database), judging leases against its own clock would blame workers for that
lag and run their jobs again. So each scheduler replica publishes a :class:`ReadTick` into the
queues it consumes and records, per queue, the send time of the latest tick it applied: its
read horizon. Every message published before that time has been applied.

An attempt's lease has expired only when ``renewed_at + lease < horizon``: the scheduler has
read past the moment the next heartbeat was due, and no heartbeat renewed it. ``renewed_at``
is the heartbeat's own send time (clamped to when it was applied, so a worker clock running
ahead cannot stretch a lease).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal


def lease_horizon(
    horizons: Mapping[str, Iterable[datetime]], required: Iterable[str]
) -> datetime | None:
    """The time up to which every live replica has read every ``required`` queue: the
    smallest horizon over them. None when a required queue has no live reader (nothing may
    be judged then)."""
    smallest: datetime | None = None
    for queue in required:
        values = list(horizons.get(queue, ()))
        if not values:
            return None
        lowest = min(values)
        smallest = lowest if smallest is None else min(smallest, lowest)
    return smallest


Verdict = Literal["timeout", "lease_expired"]


def verdict(
    *, lease_expires_at: datetime | None, deadline_at: datetime | None, horizon: datetime
) -> Verdict | None:
    """What the reaper does with a running attempt, given how far it has read: a timeout
    (the deadline passed) wins over a lease expiry; None keeps it running."""
    if deadline_at is not None and deadline_at < horizon:
        return "timeout"
    if lease_expires_at is not None and lease_expires_at < horizon:
        return "lease_expired"
    return None


def worker_went_silent(
    *, last_heartbeat_at: datetime | None, horizon: datetime, lease: timedelta
) -> bool:
    """Whether the attempt's worker as a whole stopped reporting (it died or froze), as
    opposed to a live worker that no longer lists the attempt. Only a silent worker's lost
    attempt counts toward the poison threshold."""
    return last_heartbeat_at is None or last_heartbeat_at + lease < horizon


@dataclass(frozen=True)
class LeaseLoss:
    # The job's count of attempts lost with a silent worker, this one included.
    lost_count: int
    # Dead at once as poison, instead of going through the failure policy.
    poison: bool


def after_lease_lost(
    *, lost_count: int, silent: bool, threshold: int, cancel_requested: bool
) -> LeaseLoss:
    """The poison threshold. An attempt lost while its worker went silent (died or froze)
    counts; one a live worker stopped listing does not. The job is poison (dead) when the
    count reaches ``threshold`` on a silent loss, unless its cancellation was asked (then
    the failure policy cancels it)."""
    count = lost_count + 1 if silent else lost_count
    return LeaseLoss(count, silent and not cancel_requested and count >= threshold)


HeldVerdict = Literal["start", "held", "reported", "lost"]

# Attempt ends that only the worker's own ``JobResult`` records (the scheduler's own ends,
# timeouts, lost leases and cancellations, tell the worker themselves).
REPORTED_ENDS = frozenset({"succeeded", "failed"})


def listed_attempt(
    *,
    attempt: int,
    worker_id: str,
    status: str | None,
    current_attempt: int | None,
    holder: str | None,
    reported_by: str | None = None,
) -> HeldVerdict:
    """What a heartbeat listing an attempt means when the renewal of its lease did not match
    the job's row (read afterwards: ``status``, ``current_attempt``, ``holder``).

    The worker lists only attempts whose ``JobRunning`` the broker confirmed, so the listing
    proves the attempt started there. ``start``: the row still waits for that ``JobRunning``
    (``queued``, same attempt; a scheduler that restarted reads heartbeats before it), so the
    heartbeat starts the attempt. ``held``: the row is running on this very worker (its start
    committed between the renewal and this read). ``lost`` only when the store moved on: the
    job is at another attempt, ended, waits for a retry, or another worker took it over. An
    attempt is never declared lost while the store records it as its worker's.

    ``reported``: the listed attempt ended by this worker's own result (``reported_by``: the
    worker whose ``JobResult`` ended it as succeeded or failed). The heartbeat was sent before
    that result was confirmed and read after it (two queues): the worker holds nothing, and
    there is nothing to tell it.
    """
    if reported_by is not None and reported_by == worker_id:
        return "reported"
    if status is None or current_attempt != attempt:
        return "lost"
    if status == "queued":
        return "start"
    if status == "running" and holder == worker_id:
        return "held"
    return "lost"


def dead_predecessors(
    replica_ids: Iterable[str],
    *,
    hostname: str,
    pid: int,
    alive: Callable[[int], bool],
    ours: Collection[str] = (),
) -> list[str]:
    """The replicas (``<host>-<pid>-<suffix>``) of this host that are gone: a process of this
    host whose pid no longer runs, or one with this very pid that is not among this
    process's own replicas (``ours``): a container restarted by its runtime keeps its hostname
    and runs the scheduler under the same pid again (often 1). Their read horizons, frozen,
    would hold every lease judgment back until they go stale
    (``SCHEDULER_HORIZON_STALE_SECONDS``, 90 s): a replica that starts forgets them. Other
    hosts' replicas are left to go stale (hostnames must differ between live replicas)."""
    dead = []
    for replica in replica_ids:
        parts = replica.rsplit("-", 2)
        if len(parts) != 3 or not parts[1].isdigit() or parts[0] != hostname:
            continue
        other = int(parts[1])
        gone = replica not in ours if other == pid else not alive(other)
        if gone:
            dead.append(replica)
    return dead
