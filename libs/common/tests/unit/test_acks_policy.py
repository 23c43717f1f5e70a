"""The ack policy's decision table, written out by hand, and the requeue counting."""

import pytest

from jobs_common.acks import (
    AckPolicy,
    Action,
    Decision,
    Outcome,
    RequeueCounts,
    decide,
    delivery_key,
    requeue_pause,
)

pytestmark = pytest.mark.unit

POLICY = AckPolicy(max_requeues=3, pause=0.5, max_pause=3.0)

H, P, T = Outcome.HANDLED, Outcome.POISON, Outcome.TRANSIENT
ACK = Decision(Action.ACK, "ack")
POISON = Decision(Action.REJECT, "poison")
LIMIT = Decision(Action.REJECT, "requeue_limit")


@pytest.mark.parametrize(
    ("outcome", "requeues", "expected"),
    [
        (H, 0, ACK),
        (H, 2, ACK),
        (H, 3, ACK),  # handled at the limit: still acked
        (H, 50, ACK),
        (P, 0, POISON),  # poison never requeues, not even once
        (P, 1, POISON),
        (P, 3, POISON),
        (P, 50, POISON),
        (T, 0, Decision(Action.REQUEUE, "requeue", 0.5)),
        (T, 1, Decision(Action.REQUEUE, "requeue", 1.0)),
        (T, 2, Decision(Action.REQUEUE, "requeue", 2.0)),
        (T, 3, LIMIT),  # the 4th failure after 3 requeues goes to the dead path
        (T, 4, LIMIT),
        (T, 1000, LIMIT),
    ],
)
def test_decision_table(outcome: Outcome, requeues: int, expected: Decision) -> None:
    assert decide(outcome, requeues=requeues, policy=POLICY) == expected


@pytest.mark.parametrize(
    ("requeues", "pause"),
    [(0, 0.5), (1, 1.0), (2, 2.0), (3, 3.0), (4, 3.0), (10, 3.0), (10_000, 3.0)],
)
def test_the_pause_doubles_and_is_capped(requeues: int, pause: float) -> None:
    assert requeue_pause(requeues, POLICY) == pause


def test_a_bound_of_zero_sends_the_first_transient_failure_to_the_dead_path() -> None:
    policy = AckPolicy(max_requeues=0, pause=1.0, max_pause=1.0)
    assert decide(T, requeues=0, policy=policy) == LIMIT
    assert decide(H, requeues=0, policy=policy) == ACK


def test_the_defaults_requeue_ten_times_from_one_second_to_thirty() -> None:
    policy = AckPolicy()
    pauses = [decide(T, requeues=n, policy=policy).pause for n in range(10)]
    assert pauses == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0, 30.0]
    assert decide(T, requeues=10, policy=policy) == LIMIT


@pytest.mark.parametrize(
    "fields",
    [{"max_requeues": -1}, {"pause": -0.1}, {"max_pause": -1.0}],
)
def test_negative_settings_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        AckPolicy(**fields)  # type: ignore[arg-type]


def test_a_delivery_is_known_by_its_message_id_else_by_its_body() -> None:
    assert delivery_key("m-1", b"x") == "id:m-1"
    assert delivery_key("m-1", b"y") == "id:m-1"
    assert delivery_key(None, b"x") == delivery_key("", b"x")
    assert delivery_key(None, b"x").startswith("body:")
    assert delivery_key(None, b"x") != delivery_key(None, b"y")


def test_requeue_counts_grow_and_are_forgotten() -> None:
    counts = RequeueCounts(capacity=10)
    assert counts.get("a") == 0
    assert [counts.bump("a"), counts.bump("a"), counts.bump("b")] == [1, 2, 1]
    assert (counts.get("a"), counts.get("b"), len(counts)) == (2, 1, 2)
    counts.forget("a")
    counts.forget("never-seen")
    assert (counts.get("a"), len(counts)) == (0, 1)


def test_requeue_counts_keep_only_the_most_recently_bumped_keys() -> None:
    counts = RequeueCounts(capacity=2)
    counts.bump("a")
    counts.bump("b")
    counts.bump("a")  # a is now the most recent
    counts.bump("c")  # evicts b
    assert (counts.get("a"), counts.get("b"), counts.get("c")) == (2, 0, 1)
    assert len(counts) == 2


def test_requeue_counts_need_room_for_one_key() -> None:
    with pytest.raises(ValueError):
        RequeueCounts(capacity=0)
