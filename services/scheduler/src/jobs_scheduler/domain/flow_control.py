"""How many of a queue's waiting dispatches the relay may send now (docs/flow-control.md).

A project's queue may cap its running jobs (``maxConcurrency``) and the rate its jobs start
at (``rateLimit``). The relay sends a limited queue's dispatches only within its **budget**:
the slots its limit leaves (``maxConcurrency`` minus the jobs in flight: running, or sent and
not started) and, under a rate limit, the whole tokens of its bucket. The rest wait in the
outbox, their jobs ``queued``, until a job of the queue ends or the bucket refills.

The bucket holds at most half a second's worth of the rate (at least one token), so a queue
limited to 20 jobs/s sends at most 10 at once, then 20 a second: over any ten seconds within
5 % of the rate.

A **concurrency key** caps the jobs in flight per value of a payload field (one running job
per ``customerId``): a dispatch whose value has its limit in flight waits, the others of the
queue go on.

A **project** may cap its jobs in flight across all its queues (``maxRunning``): its
dispatches share the slots that limit leaves, beside their own queue's budget."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import orjson

Pair = tuple[uuid.UUID, str]  # (project, queue name)
# Two relay intervals (0.25 s each by default): a pass a little late still finds its tokens.
BURST_SECONDS = 0.5


def capacity(limit: int, per_seconds: int) -> float:
    """The most tokens a bucket holds."""
    return max(1.0, math.ceil(limit / per_seconds * BURST_SECONDS))


def refilled(tokens: float | None, *, limit: int, per_seconds: int, elapsed: float) -> float:
    """The tokens after ``elapsed`` seconds since the last refill (None: a full bucket)."""
    full = capacity(limit, per_seconds)
    if tokens is None:
        return full
    return min(full, tokens + max(0.0, elapsed) * limit / per_seconds)


UNLIMITED = 1 << 30


@dataclass(frozen=True)
class KeyLimit:
    """At most ``limit`` jobs in flight per value of the payload's ``field``; ``in_flight``
    counts the values that have any."""

    field: str
    limit: int
    in_flight: Mapping[str, int]

    def slots(self, value: str) -> int:
        return max(0, self.limit - self.in_flight.get(value, 0))

    def spent(self) -> list[str]:
        return sorted(value for value in self.in_flight if self.slots(value) == 0)


@dataclass(frozen=True)
class Budget:
    """What the relay may send of one limited queue in this pass."""

    queue_id: uuid.UUID
    slots: int
    tokens: float | None = None  # after the refill; None: no rate limit
    key: KeyLimit | None = None
    at: datetime | None = None  # when the bucket was refilled (the database's clock)

    @classmethod
    def of(
        cls,
        queue_id: uuid.UUID,
        *,
        max_concurrency: int | None,
        in_flight: int,
        tokens: float | None,
        key: KeyLimit | None = None,
        at: datetime | None = None,
    ) -> Budget:
        by_limit = math.inf if max_concurrency is None else max(0, max_concurrency - in_flight)
        by_rate = math.inf if tokens is None else math.floor(tokens)
        slots = min(by_limit, by_rate)
        return cls(queue_id, int(slots) if slots != math.inf else UNLIMITED, tokens, key, at)


def key_value(payload: object, field: str) -> str | None:
    """A payload's value of a concurrency key as PostgreSQL's ``payload->>field`` reads it
    (a string as it is, another JSON value as its JSON text); None: no such field, or null:
    the job is not limited by the key."""
    if not isinstance(payload, dict):
        return None
    value = payload.get(field)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


Row = tuple[int, Pair | None, object]  # (outbox id, its dispatch's queue, its payload)


def within(
    rows: Sequence[Row],
    budgets: Mapping[Pair, Budget],
    projects: Mapping[uuid.UUID, int] | None = None,
) -> set[int]:
    """The ids of the rows this pass sends: each limited queue's first ones within its
    budget (and within its key's per value), and each limited project's first ones within
    the slots ``projects`` leaves it, in outbox order; every other row."""
    left = {pair: budget.slots for pair, budget in budgets.items()}
    project_left = dict(projects or {})
    used: dict[tuple[Pair, str], int] = {}
    sent: set[int] = set()
    for row_id, pair, payload in sorted(rows, key=lambda row: row[0]):
        if pair is None:
            sent.add(row_id)
            continue
        if project_left.get(pair[0], 1) <= 0:
            continue
        if pair not in left:
            sent.add(row_id)
            _take(project_left, pair[0])
            continue
        if left[pair] <= 0:
            continue
        key = budgets[pair].key
        value = None if key is None else key_value(payload, key.field)
        if key is not None and value is not None:
            if used.get((pair, value), 0) >= key.slots(value):
                continue
            used[(pair, value)] = used.get((pair, value), 0) + 1
        left[pair] -= 1
        _take(project_left, pair[0])
        sent.add(row_id)
    return sent


def _take(project_left: dict[uuid.UUID, int], project: uuid.UUID) -> None:
    if project in project_left:
        project_left[project] -= 1
