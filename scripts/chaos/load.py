"""One round's mixed load through the gateway, planned from the round's seed.

Kinds of request (each job remembers its kind and what it must end as):

- ``instant`` / ``slow``: one simulate job that never fails by itself (both failure rates 0),
  0-50 ms or ``slow_seconds`` long; must succeed;
- ``batch``: ``POST /api/batches`` of instant and slow members; must succeed;
- ``email``: one email to the SMTP sink; must succeed, and reach the sink once;
- ``dag``: a batch ``a -> (b, c) -> d`` by refs, and ``chain``: a parent, then a child naming
  its id in ``dependsOn``; must succeed, children after their parents;
- ``delayed``: an instant job with ``delaySeconds`` 1-4; must succeed;
- ``flaky``: fails half of its attempts on purpose (``failureRate`` 0.5, 6 attempts, fixed
  200 ms retry); may end dead, by its own failures only;
- ``permanent``: an image_resize of a broken PNG, a permanent failure; must end dead at once;
- ``team``: a team's own type on the shared ``default`` queue (``acc.reverse``,
  ``jobs_testing.team_handlers``), which only some workers load (the platform starts it on
  the first; ``rolling-deploy`` moves it); must succeed, and is never failed by a worker
  without it.

A ``flow-control`` round adds a second project's load (``plan_limited``), to its queue
limited to ``maxConcurrency`` jobs: ``limited`` (one slow job) and ``limited-batch`` (a
batch of more slow jobs than the limit at once); they must succeed. Its size follows the
limit: ``limited_load`` seconds of work per slot and second of load, so a backlog builds and
drains soon after the load.

Requests go out at planned times (open loop, at most ``max_in_flight`` at once); each is
retried with its idempotency key until answered (``client.GatewayClient``).
"""

from __future__ import annotations

import asyncio
import base64
import random
import time
from dataclasses import dataclass, field
from typing import Any

from jobs_testing.team_handlers import TEAM_TYPE

from .client import Answer, GatewayClient
from .knobs import LoadShape

SUCCEED = "succeed"  # what a job must end as
MAY_FAIL = "may-fail"
DEAD = "dead"

INSTANT = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.05}
BROKEN_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"broken" * 10).decode()
SINK_RECIPIENT = "chaos@example.com"

KIND_WEIGHTS: dict[str, float] = {
    "instant": 28,
    "slow": 16,
    "batch": 10,
    "email": 12,
    "dag": 4,
    "chain": 4,
    "delayed": 10,
    "flaky": 12,
    "permanent": 4,
    "team": 8,
}


@dataclass(frozen=True)
class PlannedRequest:
    at: float  # seconds after the load starts
    kind: str
    path: str
    body: dict[str, Any]
    expect: tuple[str, ...]  # per job of the request (a batch has several)


@dataclass(frozen=True)
class AcceptedJob:
    job_id: str
    kind: str
    expect: str
    request_key: str


@dataclass
class LoadOutcome:
    accepted: dict[str, AcceptedJob] = field(default_factory=dict)
    refused: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    given_up: list[tuple[str, str]] = field(default_factory=list)  # (kind, idempotency key)
    requests: int = 0
    answered: int = 0
    retried: int = 0  # requests that needed more than one try
    started: float = 0.0
    finished: float = 0.0

    def add(self, answer: Answer, kind: str, expect: tuple[str, ...]) -> list[str]:
        self.requests += 1
        if answer.tries > 1:
            self.retried += 1
        if answer.status == 0:
            self.given_up.append((kind, answer.key))
            return []
        if not 200 <= answer.status < 300:
            self.refused.append((kind, answer.status, answer.body))
            return []
        self.answered += 1
        ids = answer.body.get("jobIds") or [answer.body["jobId"]]
        for job_id, wanted in zip(ids, expect, strict=True):
            self.accepted[job_id] = AcceptedJob(job_id, kind, wanted, answer.key)
        return list(ids)

    def absorb(self, other: LoadOutcome) -> None:
        """Count another client's load of the same round as this one's."""
        self.accepted.update(other.accepted)
        self.refused += other.refused
        self.given_up += other.given_up
        self.requests += other.requests
        self.answered += other.answered
        self.retried += other.retried
        self.finished = max(self.finished, other.finished)


def _simulate(priority: int, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "simulate", "priority": priority, "payload": payload, **extra}


class Planner:
    def __init__(self, rng: random.Random, shape: LoadShape, round_no: int) -> None:
        self.rng = rng
        self.shape = shape
        self.round_no = round_no
        self.count = 0

    def priority(self) -> int:
        return self.rng.randint(1, 3)

    def slow(self) -> dict[str, Any]:
        low, high = self.shape.slow_seconds
        return {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": low, "maxSeconds": high}

    def member(self) -> dict[str, Any]:
        payload = self.slow() if self.rng.random() < 0.3 else INSTANT
        return _simulate(self.priority(), payload, maxAttempts=5)

    def request(self, at: float, kind: str) -> PlannedRequest:
        self.count += 1
        rng = self.rng
        if kind == "instant":
            body = _simulate(self.priority(), INSTANT, maxAttempts=5)
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "slow":
            body = _simulate(self.priority(), self.slow(), maxAttempts=5, timeoutSeconds=120)
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "batch":
            size = rng.randint(*self.shape.batch_size)
            jobs = [self.member() for _ in range(size)]
            name = f"chaos r{self.round_no} #{self.count}"
            return PlannedRequest(
                at, kind, "/api/batches", {"name": name, "jobs": jobs}, (SUCCEED,) * size
            )
        if kind == "email":
            body = {
                "type": "email",
                "priority": self.priority(),
                "maxAttempts": 5,
                "payload": {
                    "to": SINK_RECIPIENT,
                    "subject": f"chaos round {self.round_no} mail {self.count}",
                    "body": "sent by scripts/chaos.py",
                },
            }
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "dag":
            quick = self.slow() if rng.random() < 0.5 else INSTANT
            jobs = [
                {"ref": "a", **_simulate(self.priority(), quick, maxAttempts=5)},
                {"ref": "b", **_simulate(self.priority(), INSTANT, maxAttempts=5)},
                {"ref": "c", **_simulate(self.priority(), quick, maxAttempts=5)},
                {"ref": "d", **_simulate(self.priority(), INSTANT, maxAttempts=5)},
            ]
            jobs[1]["dependsOn"] = ["ref:a"]
            jobs[2]["dependsOn"] = ["ref:a"]
            jobs[3]["dependsOn"] = ["ref:b", "ref:c"]
            body = {"name": f"chaos dag r{self.round_no} #{self.count}", "jobs": jobs}
            return PlannedRequest(at, kind, "/api/batches", body, (SUCCEED,) * 4)
        if kind == "chain":  # the child is sent once the parent's id is known (run_request)
            body = _simulate(self.priority(), self.slow(), maxAttempts=5, timeoutSeconds=120)
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "delayed":
            body = _simulate(
                self.priority(), INSTANT, maxAttempts=5, delaySeconds=rng.randint(1, 4)
            )
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "flaky":
            payload = {"immediateFailureRate": 0, "failureRate": 0.5, "minSeconds": 0}
            payload["maxSeconds"] = 0.2
            body = _simulate(
                self.priority(),
                payload,
                maxAttempts=6,
                retryPolicy={"strategy": "fixed", "baseDelayMs": 200, "jitter": False},
            )
            return PlannedRequest(at, kind, "/api/jobs", body, (MAY_FAIL,))
        if kind == "team":
            body = {
                "type": TEAM_TYPE,
                "priority": self.priority(),
                "payload": {"text": f"chaos {self.round_no} {self.count}"},
            }
            return PlannedRequest(at, kind, "/api/jobs", body, (SUCCEED,))
        if kind == "permanent":
            body = {
                "type": "image_resize",
                "priority": self.priority(),
                "maxAttempts": 3,
                "payload": {"imageBase64": BROKEN_PNG, "width": 8, "height": 8},
            }
            return PlannedRequest(at, kind, "/api/jobs", body, (DEAD,))
        raise ValueError(kind)


def plan(rng: random.Random, shape: LoadShape, round_no: int) -> list[PlannedRequest]:
    """Requests at evenly spread times (with jitter), kinds drawn by weight; the first few
    requests cover every kind, so even a small load has each of them."""
    planner = Planner(rng, shape, round_no)
    total = max(len(KIND_WEIGHTS), round(shape.seconds * shape.rate))
    kinds = list(KIND_WEIGHTS)
    drawn = rng.choices(kinds, weights=list(KIND_WEIGHTS.values()), k=total - len(kinds))
    order = kinds + drawn
    rng.shuffle(order)
    step = shape.seconds / total
    return [
        planner.request(min(shape.seconds, (index + rng.random()) * step), kind)
        for index, kind in enumerate(order)
    ]


def plan_limited(
    rng: random.Random, shape: LoadShape, round_no: int, limit: int
) -> list[PlannedRequest]:
    """The second project's requests for a queue limited to ``limit`` running jobs: slow
    jobs and batches of them, ``limit * shape.seconds * shape.limited_load`` seconds of work
    in all (by their mean length), at random times over the load."""
    planner = Planner(rng, shape, round_no)
    low, high = shape.slow_seconds
    budget = limit * shape.seconds * shape.limited_load
    requests: list[PlannedRequest] = []
    work = 0.0
    while work < budget:
        at = rng.uniform(0.0, shape.seconds)
        if rng.random() < 0.3:
            size = rng.randint(limit + 1, 3 * limit)
            body = {
                "name": f"chaos limited r{round_no} #{len(requests) + 1}",
                "jobs": [
                    _simulate(planner.priority(), planner.slow(), maxAttempts=5)
                    for _ in range(size)
                ],
            }
            requests.append(
                PlannedRequest(at, "limited-batch", "/api/batches", body, (SUCCEED,) * size)
            )
        else:
            size = 1
            body = _simulate(planner.priority(), planner.slow(), maxAttempts=5, timeoutSeconds=120)
            requests.append(PlannedRequest(at, "limited", "/api/jobs", body, (SUCCEED,)))
        work += size * (low + high) / 2
    return sorted(requests, key=lambda request: request.at)


async def run_request(client: GatewayClient, request: PlannedRequest, outcome: LoadOutcome) -> None:
    answer = await client.submit(request.path, request.body)
    ids = outcome.add(answer, request.kind, request.expect)
    if request.kind == "chain" and ids:
        child = {**request.body, "dependsOn": ids, "payload": INSTANT}
        child_answer = await client.submit("/api/jobs", child)
        outcome.add(child_answer, "chain", (SUCCEED,))


async def run_load(
    client: GatewayClient, requests: list[PlannedRequest], max_in_flight: int
) -> LoadOutcome:
    """Fire every request at its time; return once each has its answer (or was given up)."""
    outcome = LoadOutcome(started=time.time())
    gate = asyncio.Semaphore(max_in_flight)
    begin = time.monotonic()

    async def fire(request: PlannedRequest) -> None:
        await asyncio.sleep(max(0.0, begin + request.at - time.monotonic()))
        async with gate:
            await run_request(client, request, outcome)

    await asyncio.gather(*(fire(request) for request in requests))
    outcome.finished = time.time()
    return outcome
