"""The Workers view's pure rules: status with quiet, numeric-aware order, who can be told."""

from datetime import UTC, datetime, timedelta

import pytest

from jobs_dashboard.domain.workers import (
    WorkerStatus,
    WorkerView,
    command_refused,
    natural_key,
    sorted_workers,
    worker_status,
)

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def view(worker_id: str, status: str) -> WorkerView:
    return WorkerView.model_validate(
        {
            "id": worker_id,
            "hostname": "h",
            "pid": 1,
            "version": "1",
            "queues": [],
            "concurrency": 1,
            "active_jobs": 0,
            "started_at": NOW,
            "last_heartbeat_at": NOW,
            "status": status,
            "quiet": status == "quiet",
            "processed": 0,
            "failed": 0,
            "running": [],
        }
    )


def test_ids_sort_by_the_value_of_their_numbers() -> None:
    ids = ["w-10", "w-2", "w-1", "W-3", "w-2b", "host-9-x", "host-10-a"]
    assert sorted(ids, key=natural_key) == [
        "host-9-x",
        "host-10-a",
        "w-1",
        "w-2",
        "w-2b",
        "W-3",
        "w-10",
    ]


def test_live_workers_come_first_then_quiet_stopping_unknown_dead() -> None:
    listed = sorted_workers(
        [
            view("w-1", "dead"),
            view("w-10", "alive"),
            view("w-4", "stopping"),
            view("w-9", "quiet"),
            view("w-2", "alive"),
            view("w-3", "unknown"),
        ]
    )
    assert [(w.id, w.status) for w in listed] == [
        ("w-2", "alive"),
        ("w-10", "alive"),
        ("w-9", "quiet"),
        ("w-4", "stopping"),
        ("w-3", "unknown"),
        ("w-1", "dead"),
    ]


def test_quiet_shows_until_the_worker_stops_or_dies() -> None:
    def status(*, age: float, quiet: bool, stopping: bool = False) -> str:
        return worker_status(
            last_heartbeat_at=NOW - timedelta(seconds=age),
            stopping=stopping,
            quiet=quiet,
            horizon=NOW,
            dead_after=timedelta(seconds=10),
        )

    assert status(age=1, quiet=True) == "quiet"
    assert status(age=1, quiet=True, stopping=True) == "stopping"
    assert status(age=60, quiet=True) == "dead"
    assert status(age=1, quiet=False) == "alive"


def test_only_a_dead_worker_refuses_commands() -> None:
    assert command_refused("dead") is not None
    statuses: list[WorkerStatus] = ["alive", "quiet", "stopping", "unknown"]
    for status in statuses:
        assert command_refused(status) is None
