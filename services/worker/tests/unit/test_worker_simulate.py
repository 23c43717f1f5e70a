"""The simulated job's plan is deterministic with a seed and honours its rates."""

from __future__ import annotations

import random

import pytest

from jobs_worker.domain.simulate import plan_simulation
from jobs_worker.handlers.payloads import SimulatePayload

pytestmark = pytest.mark.unit


def payload(**kwargs: object) -> SimulatePayload:
    return SimulatePayload.model_validate(kwargs)


def test_same_seed_same_plan() -> None:
    plans = {plan_simulation(payload(seed=42)) for _ in range(5)}
    assert len(plans) == 1


def test_seeded_plan_matches_the_reference_sequence() -> None:
    rng = random.Random(7)
    immediate = rng.random() < 0.2
    expected_duration = rng.uniform(1.0, 4.0)
    expected_fail = rng.random() < 0.5
    plan = plan_simulation(payload(seed=7))
    assert not immediate
    assert plan.immediate_failure is False
    assert plan.duration_seconds == expected_duration
    assert plan.fails is expected_fail


def test_rates_one_and_zero() -> None:
    assert plan_simulation(payload(immediateFailureRate=1, seed=1)).immediate_failure
    always_fails = plan_simulation(payload(immediateFailureRate=0, failureRate=1, seed=1))
    assert (always_fails.immediate_failure, always_fails.fails) == (False, True)
    never_fails = plan_simulation(payload(immediateFailureRate=0, failureRate=0, seed=1))
    assert (never_fails.immediate_failure, never_fails.fails) == (False, False)


def test_duration_within_bounds() -> None:
    for seed in range(50):
        plan = plan_simulation(
            payload(immediateFailureRate=0, minSeconds=0.5, maxSeconds=0.75, seed=seed)
        )
        assert 0.5 <= plan.duration_seconds <= 0.75


def test_failure_rate_is_roughly_honoured() -> None:
    outcomes = [
        plan_simulation(payload(immediateFailureRate=0, failureRate=0.3, seed=s)).fails
        for s in range(2000)
    ]
    assert 0.25 < sum(outcomes) / len(outcomes) < 0.35
