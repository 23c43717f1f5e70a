"""The simulated job of the reference demo, decided up front so it is testable without time."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol


class SimulationKnobs(Protocol):
    """What a simulate payload says (``jobs_worker.handlers.payloads.SimulatePayload``)."""

    @property
    def immediate_failure_rate(self) -> float: ...
    @property
    def failure_rate(self) -> float: ...
    @property
    def min_seconds(self) -> float: ...
    @property
    def max_seconds(self) -> float: ...
    @property
    def seed(self) -> int | None: ...


@dataclass(frozen=True)
class SimulationPlan:
    immediate_failure: bool
    duration_seconds: float
    fails: bool


_UNSEEDED = random.Random()  # seeding a generator per job read os.urandom every time


def plan_simulation(payload: SimulationKnobs) -> SimulationPlan:
    """Maybe fail at once; else run ``uniform(min, max)`` seconds, then flip a coin.

    With ``seed`` the plan is the same every time (``random.Random(seed)``)."""
    rng = random.Random(payload.seed) if payload.seed is not None else _UNSEEDED
    if rng.random() < payload.immediate_failure_rate:
        return SimulationPlan(immediate_failure=True, duration_seconds=0.0, fails=True)
    duration = rng.uniform(payload.min_seconds, payload.max_seconds)
    return SimulationPlan(
        immediate_failure=False,
        duration_seconds=duration,
        fails=rng.random() < payload.failure_rate,
    )
