"""Where a ready message goes (domain/routing.py, issue 31 point 4): only where a live
worker serves its job's type."""

from __future__ import annotations

import pytest

from jobs_common.topology import lane_for, ready_queue_for
from jobs_scheduler.domain.routing import LiveWorker, route

pytestmark = pytest.mark.unit

QUEUE = ready_queue_for(2)


def worker(name: str, *types: str, queues: tuple[str, ...] = (QUEUE,)) -> LiveWorker:
    return LiveWorker(name, frozenset(queues), frozenset(types))


def test_every_consumer_serves_the_type_its_queue() -> None:
    workers = [worker("a", "acc.reverse", "simulate"), worker("b", "acc.reverse")]
    assert route("acc.reverse", QUEUE, workers).routing_key == QUEUE


def test_some_consumers_do_not_serve_it_the_types_lane() -> None:
    """A rolling deploy that reached worker a first: only a serves the new type."""
    workers = [worker("a", "acc.reverse", "simulate"), worker("b", "simulate")]
    assert route("acc.reverse", QUEUE, workers).routing_key == lane_for("acc.reverse")
    assert route("simulate", QUEUE, workers).routing_key == QUEUE


def test_no_live_worker_serves_it_it_waits() -> None:
    waits = route("acc.reverse", QUEUE, [worker("b", "simulate")])
    assert waits.routing_key is None and "acc.reverse" in waits.reason
    assert route("acc.reverse", QUEUE, []).routing_key is None


def test_a_lane_stays_a_lane_while_a_worker_serves_the_type() -> None:
    lane = lane_for("acc.reverse")
    assert route("acc.reverse", lane, [worker("a", "acc.reverse")]).routing_key == lane
    assert route("acc.reverse", lane, [worker("b", "simulate")]).routing_key is None


def test_a_capable_worker_that_consumes_other_queues_gets_it_by_the_lane() -> None:
    elsewhere = worker("a", "acc.reverse", queues=(ready_queue_for(2, "reports"),))
    assert route("acc.reverse", QUEUE, [elsewhere]).routing_key == lane_for("acc.reverse")


def test_a_worker_that_lists_no_types_serves_every_type() -> None:
    old = LiveWorker("old", frozenset({QUEUE}), None)
    assert route("acc.reverse", QUEUE, [old]).routing_key == QUEUE
