from pathlib import Path

import pytest

from jobs_common import topology
from jobs_common.topology_definitions import render

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[4]


def test_ready_queues_dead_letter_to_jobs_dead_after_60s() -> None:
    for queue in topology.READY_QUEUES:
        assert topology.queue_arguments(queue) == {
            "x-queue-type": "classic",
            "x-message-ttl": 60_000,
            "x-dead-letter-exchange": "jobs.dlx",
            "x-dead-letter-routing-key": "jobs.dead",
        }


def test_other_queues_have_no_ttl_or_dead_lettering() -> None:
    for queue in set(topology.ALL_QUEUES) - set(topology.READY_QUEUES):
        assert topology.queue_arguments(queue) == {"x-queue-type": "classic"}


@pytest.mark.parametrize(
    ("priority", "queue"), [(1, "jobs.ready.low"), (2, "jobs.ready.medium"), (3, "jobs.ready.high")]
)
def test_priority_maps_to_ready_queue(priority: int, queue: str) -> None:
    assert topology.ready_queue_for(priority) == queue


def test_priority_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError):
        topology.ready_queue_for(4)


def test_committed_definitions_json_matches_the_topology_module() -> None:
    committed = (ROOT / "infra" / "rabbitmq" / "definitions.json").read_bytes()
    assert committed == render(), "run `make topology-definitions`"


def test_jobs_dead_is_bound_on_both_exchanges() -> None:
    dead = {(b.exchange, b.routing_key) for b in topology.bindings() if b.queue == "jobs.dead"}
    assert dead == {("jobs.exchange", "jobs.dead"), ("jobs.dlx", "jobs.dead")}


@pytest.mark.parametrize(
    ("name", "job_type"),
    [
        ("jobs.lane.acc.reverse", "acc.reverse"),
        ("jobs.lane.", None),
        ("jobs.ready.medium", None),
        ("x.jobs.lane.email", None),
    ],
)
def test_a_lanes_job_type_is_read_back_from_its_name(name: str, job_type: str | None) -> None:
    assert topology.lane_type(name) == job_type
    assert topology.is_lane(name) is (job_type is not None)
    if job_type is not None:
        assert topology.lane_for(job_type) == name
