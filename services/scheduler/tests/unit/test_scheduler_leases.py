"""Lease rules judged against the read horizon: expectations written out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs_scheduler.domain.leases import (
    dead_predecessors,
    lease_horizon,
    verdict,
    worker_went_silent,
)

pytestmark = pytest.mark.unit

T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("horizons", "expected"),
    [
        # Both queues read by one replica: the slower queue decides.
        ({"hb": [at(10)], "res": [at(7)]}, at(7)),
        # Two replicas: the one that has read least decides.
        ({"hb": [at(10), at(4)], "res": [at(9), at(8)]}, at(4)),
        # No live reader of the results: nothing can be judged.
        ({"hb": [at(10)], "res": []}, None),
        ({"hb": [at(10)]}, None),
        ({}, None),
    ],
)
def test_the_lease_horizon_is_the_least_read_required_queue(
    horizons: dict[str, list[datetime]], expected: datetime | None
) -> None:
    assert lease_horizon(horizons, ("hb", "res")) == expected


@pytest.mark.parametrize(
    ("lease_expires_at", "deadline_at", "horizon", "expected"),
    [
        (at(10), at(100), at(9), None),  # read up to 9 s: the lease still runs
        (at(10), at(100), at(10), None),  # exactly at the end: not yet past it
        (at(10), at(100), at(11), "lease_expired"),
        (at(10), at(8), at(9), "timeout"),  # the deadline passed first
        (at(10), at(8), at(11), "timeout"),  # both passed: the timeout wins
        (None, at(8), at(9), "timeout"),
        (None, None, at(1000), None),
    ],
)
def test_the_reaper_verdict(
    lease_expires_at: datetime | None,
    deadline_at: datetime | None,
    horizon: datetime,
    expected: str | None,
) -> None:
    assert (
        verdict(lease_expires_at=lease_expires_at, deadline_at=deadline_at, horizon=horizon)
        == expected
    )


@pytest.mark.parametrize(
    ("last_heartbeat_at", "horizon", "expected"),
    [
        (at(0), at(5), False),  # heard from 5 s before the horizon: alive
        (at(0), at(10), False),  # exactly one lease: not yet silent
        (at(0), at(11), True),  # more than a lease of reading without a word from it
        (None, at(0), True),  # never heard of
    ],
)
def test_only_a_worker_silent_for_a_lease_went_silent(
    last_heartbeat_at: datetime | None, horizon: datetime, expected: bool
) -> None:
    silent = worker_went_silent(
        last_heartbeat_at=last_heartbeat_at, horizon=horizon, lease=timedelta(seconds=10)
    )
    assert silent is expected


def test_a_starting_replica_forgets_the_dead_replicas_of_its_host_only() -> None:
    known = [
        "host-a-100-aaaaaa",  # this host, its process gone: a crashed replica
        "host-a-200-bbbbbb",  # this host, alive
        "host-a-300-cccccc",  # this very process (another replica of it, in tests)
        "host-a-300-eeeeee",  # this pid, not this process's: a restarted container's predecessor
        "host-b-100-dddddd",  # another host: left to go stale
        "replica-without-pid",
    ]
    dead = dead_predecessors(
        known,
        hostname="host-a",
        pid=300,
        alive=lambda pid: pid in (200, 300),
        ours={"host-a-300-cccccc"},
    )
    assert dead == ["host-a-100-aaaaaa", "host-a-300-eeeeee"]
