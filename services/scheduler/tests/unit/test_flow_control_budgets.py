"""The relay's budgets (``domain/flow_control.py``): slots a limit leaves, whole tokens of a
bucket that holds a quarter second of its rate, and which rows of a pass go out."""

from __future__ import annotations

import uuid

import pytest

from jobs_scheduler.domain.flow_control import (
    Budget,
    KeyLimit,
    capacity,
    key_value,
    refilled,
    within,
)

pytestmark = pytest.mark.unit

A, B = (uuid.uuid4(), "default"), (uuid.uuid4(), "default")


def test_a_bucket_holds_half_a_second_of_its_rate_and_at_least_one_token() -> None:
    assert capacity(20, 1) == 10
    assert capacity(600, 60) == 5
    assert capacity(1, 60) == 1
    assert refilled(None, limit=20, per_seconds=1, elapsed=0) == 10
    assert refilled(0.0, limit=20, per_seconds=1, elapsed=0.1) == pytest.approx(2.0)
    assert refilled(9.5, limit=20, per_seconds=1, elapsed=60) == 10
    assert refilled(1.0, limit=20, per_seconds=1, elapsed=-3) == 1.0  # clocks never refund


def test_a_budget_is_the_smaller_of_the_free_slots_and_the_whole_tokens() -> None:
    queue = uuid.uuid4()
    assert Budget.of(queue, max_concurrency=3, in_flight=1, tokens=None).slots == 2
    assert Budget.of(queue, max_concurrency=3, in_flight=5, tokens=None).slots == 0
    assert Budget.of(queue, max_concurrency=None, in_flight=9, tokens=2.9).slots == 2
    assert Budget.of(queue, max_concurrency=10, in_flight=9, tokens=4.0).slots == 1


def test_a_pass_sends_each_limited_queue_s_first_rows_and_every_other_row() -> None:
    budgets = {A: Budget(uuid.uuid4(), 2), B: Budget(uuid.uuid4(), 0)}
    rows = [
        (5, A, {}),
        (1, A, {}),
        (2, B, {}),
        (3, None, {}),
        (4, A, {}),
        (6, (uuid.uuid4(), "x"), {}),
    ]
    assert within(rows, budgets) == {1, 3, 4, 6}


def test_a_key_caps_each_value_in_flight_and_leaves_the_other_values_and_keyless_jobs() -> None:
    key = KeyLimit("customerId", 1, {"c1": 1, "7": 0})
    budgets = {A: Budget(uuid.uuid4(), 10, key=key)}
    rows = [
        (1, A, {"customerId": "c1"}),  # its one slot is in flight
        (2, A, {"customerId": "c2"}),
        (3, A, {"customerId": "c2"}),  # the second of c2 in this pass
        (4, A, {"customerId": 7}),  # a number, read as PostgreSQL's ->> reads it: "7"
        (5, A, {}),  # no value: not limited by the key
        (6, A, {"customerId": None}),
    ]
    assert within(rows, budgets) == {2, 4, 5, 6}
    assert key.spent() == ["c1"]
    assert key_value({"customerId": True}, "customerId") == "true"
    assert key_value({"customerId": {"a": 1}}, "customerId") == '{"a":1}'
    assert key_value(["not", "an", "object"], "customerId") is None


def test_a_key_s_values_share_the_queue_s_own_budget() -> None:
    budgets = {A: Budget(uuid.uuid4(), 2, key=KeyLimit("customerId", 5, {}))}
    rows = [(n, A, {"customerId": f"c{n}"}) for n in range(1, 5)]
    assert within(rows, budgets) == {1, 2}


def test_a_limited_project_s_rows_share_its_slots_across_its_queues() -> None:
    """Project P (limited to 2 in flight) has rows on two queues, one of them limited to 1:
    its first two rows that their queue's budget lets go are sent; other projects' rows
    are not held by P's limit."""
    project = uuid.uuid4()
    limited, free = (project, "default"), (project, "reports")
    budgets = {limited: Budget(uuid.uuid4(), 1)}
    rows = [
        (1, limited, {}),
        (2, limited, {}),  # its queue's one slot is taken by row 1
        (3, free, {}),
        (4, free, {}),  # the project's two slots are taken by rows 1 and 3
        (5, A, {}),
        (6, None, {}),
    ]
    assert within(rows, budgets, {project: 2}) == {1, 3, 5, 6}
    assert within(rows, budgets, {project: 0}) == {5, 6}
    assert within(rows, budgets) == {1, 3, 4, 5, 6}
