"""Injecting one fault and recording what it hit: which process was killed or paused (name
and pid: a worker's id in the job store names its pid), when it started and ended, and how
long the platform took to be ready again.

``flow-control`` is a fault of the operator's hand and a worker's: the load's queue is paused
through the public API while jobs arrive and resumed, then the worker running a job of the
second project's limited queue is killed, so that job keeps its slot until its lease runs
out (docs/flow-control.md). The round sets the limit before its load (``rounds``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import asyncpg
import httpx

from jobs_testing.team_handlers import TEAM_MODULE

from . import knobs as k
from .client import GatewayClient
from .platform import ChaosPlatform

KILLED = "killed"
PAUSED = "paused"
LIMITED_JOB_WAIT = 10.0  # flow-control: how long to wait for a job of the limited queue to run

# Faults whose victims' jobs may legitimately run again: a worker that died or froze. (A broker
# that took its deliveries back, stopped or restarted or with every connection closed, no
# longer excuses a re-run: a redelivered copy runs only when its claim is granted.)
WORKER_FAULTS = frozenset({k.KILL_WORKER, k.WORKER_PAUSE, k.FLOW_CONTROL})
# Faults that kill a scheduler process, possibly in the middle of an outbox relay pass.
SCHEDULER_KILLS = frozenset({k.KILL_SCHEDULER, k.KILL_SCHEDULERS})


@dataclass(frozen=True)
class Victim:
    service: str
    pid: int
    action: str  # killed / paused


@dataclass(frozen=True)
class QueuePause:
    """A queue paused through the public API: from the pause's answer to the resume's
    request (nothing of it submitted meanwhile may start before ``ended``)."""

    project_id: str
    queue: str
    began: datetime
    ended: datetime


@dataclass(frozen=True)
class FlowTargets:
    """What a ``flow-control`` fault acts on: the queue it pauses and resumes (as the load's
    user), and the project whose limited queue's running job picks the worker it kills."""

    client: GatewayClient
    paused_project: str
    paused_queue: str  # its name
    paused_queue_id: str
    limited_project: str


@dataclass
class FaultRecord:
    kind: str
    started: datetime
    ended: datetime | None = None
    victims: list[Victim] = field(default_factory=list)
    note: str = ""
    recovered_s: float | None = None  # fault ended -> every service ready again
    not_ready: list[str] = field(default_factory=list)  # still unready when we gave up
    error: str = ""
    # poison-input: requests the platform should have refused with 400/422 and did not
    # (method path -> status), and how many it refused as it should.
    misanswered: list[str] = field(default_factory=list)
    refused: int = 0
    pause: QueuePause | None = None  # flow-control: the queue it held

    @property
    def worker_pids(self) -> frozenset[int]:
        """Pids of the workers this fault killed or paused."""
        return frozenset(v.pid for v in self.victims if v.service.startswith("worker"))

    def describe(self) -> str:
        who = ", ".join(f"{v.action} {v.service} (pid {v.pid})" for v in self.victims)
        length = (
            f"{(self.ended - self.started).total_seconds():.1f} s"
            if self.ended is not None
            else "?"
        )
        parts = [self.kind, f"at {self.started:%H:%M:%S.%f}"[:-3], f"lasting {length}"]
        if who:
            parts.append(who)
        if self.pause is not None:
            held = (self.pause.ended - self.pause.began).total_seconds()
            parts.append(f"queue {self.pause.queue} of the load's project paused {held:.1f} s")
        if self.note:
            parts.append(self.note)
        if self.recovered_s is not None:
            parts.append(f"ready again {self.recovered_s:.1f} s later")
        if self.not_ready:
            parts.append(f"NOT READY: {', '.join(self.not_ready)}")
        if self.error:
            parts.append(f"injection error: {self.error}")
        return "; ".join(parts)


def now() -> datetime:
    return datetime.now(UTC)


async def running_by_worker(
    platform: ChaosPlatform, project_id: str | None = None
) -> dict[str, int]:
    """Jobs running now per worker (of one project's ``default`` queue with ``project_id``)."""
    counts: dict[str, int] = {}
    query = (
        "SELECT worker_id, count(*) AS n FROM jobs WHERE status = 'running' "
        "AND worker_id IS NOT NULL"
    )
    args: list[object] = []
    if project_id is not None:
        query += " AND project_id = $1 AND queue = 'default'"
        args.append(project_id)
    with contextlib.suppress(OSError, asyncpg.PostgresError):
        connection = await asyncpg.connect(platform.database_url, timeout=5)
        try:
            rows = await connection.fetch(query + " GROUP BY worker_id", *args)
        finally:
            await connection.close()
        for row in rows:
            pid = worker_pid(row["worker_id"])
            name = platform.service_of_pid(pid) if pid is not None else None
            if name is not None:
                counts[name] = counts.get(name, 0) + row["n"]
    return counts


def busiest(counts: dict[str, int]) -> str | None:
    return max(sorted(counts), key=lambda name: counts[name]) if counts else None


async def busiest_worker(platform: ChaosPlatform, rng: random.Random) -> str:
    """The worker running the most jobs now (a fault there hits jobs), else a random one."""
    return busiest(await running_by_worker(platform)) or rng.choice(platform.names("worker"))


def worker_pid(worker_id: str | None) -> int | None:
    """The pid in a worker id (``<host>-<pid>-<suffix>``)."""
    if not worker_id:
        return None
    parts = worker_id.rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def _kill(platform: ChaosPlatform, record: FaultRecord, name: str) -> None:
    pid = platform.pid(name)
    if pid is None:
        record.note += f"{name} was not running; "
        return
    os.kill(pid, signal.SIGKILL)
    record.victims.append(Victim(name, pid, KILLED))


async def _pause(
    platform: ChaosPlatform, record: FaultRecord, name: str, seconds: float
) -> list[str]:
    pid = platform.pid(name)
    if pid is None:
        record.note += f"{name} was not running; "
        return []
    platform.pause(pid)
    record.victims.append(Victim(name, pid, PAUSED))
    try:
        await asyncio.sleep(seconds)
    finally:
        platform.resume(pid)
    return [name]


async def _rolling_deploy(platform: ChaosPlatform, record: FaultRecord) -> None:
    """Each worker in turn is stopped gracefully (SIGTERM: it drains) and started again by
    the supervisor with the team's module toggled: added where it was missing, removed where
    it was loaded. On the way the team's type is served by some workers, by all, or by none
    (its jobs wait); the toggled set is never empty at the end (3 workers, 1 or 2 load it)."""
    assert platform.stack is not None
    for name in platform.names("worker"):
        service = platform.stack.services[name]
        loaded = service.env.get("WORKER_HANDLER_MODULES") == TEAM_MODULE
        service.env["WORKER_HANDLER_MODULES"] = "" if loaded else TEAM_MODULE
        pid = platform.pid(name)
        if pid is None:
            record.note += f"{name} was not running; "
            continue
        os.kill(pid, signal.SIGTERM)
        record.note += f"{name} {'without' if loaded else 'with'} the module; "
        deadline = time.monotonic() + 60
        while platform.pid(name) in (None, pid) or platform.not_ready([name]):
            if time.monotonic() > deadline:
                record.error = f"{name} not back within 60 s"
                return
            await asyncio.sleep(0.2)
    record.note = record.note.rstrip("; ")


# Input no store can hold: a NUL in a payload string, in a key, in a batch member; a lone
# surrogate (only as a JSON escape: a str cannot carry it through httpx's encoder).
POISON_BODIES: tuple[tuple[str, bytes], ...] = (
    ("/api/jobs", b'{"type":"acc.reverse","priority":2,"payload":{"text":"a\\u0000b"}}'),
    ("/api/jobs", b'{"type":"acc.reverse","priority":2,"payload":{"text":"a\\ud800b"}}'),
    ("/api/jobs", b'{"type":"simulate","priority":1,"payload":{"k\\u0000":1}}'),
    (
        "/api/batches",
        b'{"name":"poison","jobs":[{"type":"simulate","priority":1,"payload":{}},'
        b'{"type":"acc.reverse","priority":1,"payload":{"text":"\\u0000"}}]}',
    ),
)


async def _poison_input(platform: ChaosPlatform, record: FaultRecord) -> None:
    """Requests with input no store can hold, as the load's own user: each must be refused
    with 400 or 422 and store nothing (``accepted`` finds any job they left)."""
    async with httpx.AsyncClient(base_url=platform.gateway_url, timeout=30) as client:
        login = await client.post(
            "/auth/login", json={"email": "user@test.com", "password": "user123"}
        )
        headers = {
            "Authorization": f"Bearer {login.json()['token']}",
            "Content-Type": "application/json",
        }
        for path, body in POISON_BODIES:
            answer = await client.post(path, content=body, headers=headers)
            if answer.status_code in (400, 422) and "error" in answer.json():
                record.refused += 1
            else:
                record.misanswered.append(f"POST {path} {body[:60]!r}: {answer.status_code}")
    record.note += f"{record.refused} poison requests refused"


async def _flow_control(
    platform: ChaosPlatform, record: FaultRecord, rng: random.Random, targets: FlowTargets
) -> None:
    """Pause the load's queue while jobs arrive, resume it, then kill the worker running the
    most of the limited queue's jobs (waiting a bounded while for one to run; else the
    busiest worker)."""
    client = targets.client
    await client.pause_queue(targets.paused_queue_id)
    began = now()
    try:
        await asyncio.sleep(platform.knobs.queue_pause_seconds)
    finally:
        record.pause = QueuePause(targets.paused_project, targets.paused_queue, began, now())
        await client.pause_queue(targets.paused_queue_id, paused=False)
    deadline = time.monotonic() + LIMITED_JOB_WAIT
    name = None
    while name is None and time.monotonic() < deadline:
        name = busiest(await running_by_worker(platform, targets.limited_project))
        if name is None:
            await asyncio.sleep(0.1)
    if name is None:
        record.note += "no job of the limited queue running: killed the busiest worker; "
        name = await busiest_worker(platform, rng)
    else:
        record.note += f"{name} ran a job of the limited queue; "
    _kill(platform, record, name)
    record.note = record.note.rstrip("; ")


async def inject(
    kind: str, platform: ChaosPlatform, rng: random.Random, *, flow: FlowTargets | None = None
) -> FaultRecord:
    """Apply ``kind`` now and undo it (restart, resume); then wait until every service is
    ready again (bounded), recording who was hit and how long recovery took. ``flow``: what
    a ``flow-control`` fault acts on."""
    knobs = platform.knobs
    record = FaultRecord(kind, now())
    try:
        if kind == k.KILL_SCHEDULER:
            _kill(platform, record, rng.choice(platform.names("scheduler")))
        elif kind == k.KILL_SCHEDULERS:
            for name in platform.names("scheduler"):
                _kill(platform, record, name)
        elif kind == k.KILL_WORKER:
            _kill(platform, record, await busiest_worker(platform, rng))
        elif kind in (k.KILL_SUBMISSION, k.KILL_GATEWAY, k.KILL_DASHBOARD):
            _kill(platform, record, kind.removeprefix("kill-"))
        elif kind in (k.RABBITMQ_STOP, k.RABBITMQ_RESTART):
            await asyncio.to_thread(platform.rabbit.stop_app)
            try:
                await asyncio.sleep(
                    knobs.restart_seconds if kind == k.RABBITMQ_RESTART else knobs.outage_seconds
                )
            finally:
                await asyncio.to_thread(platform.rabbit.start_app)
        elif kind == k.POSTGRES_STOP:
            await asyncio.to_thread(platform.postgres.stop)
            try:
                await asyncio.sleep(knobs.outage_seconds)
            finally:
                await asyncio.to_thread(platform.postgres.start)
        elif kind == k.MONGO_STOP:
            if platform.mongo is None:
                record.note = "skipped: MONGO_URL is set, the harness does not own MongoDB"
            else:
                pid = platform.mongo.pid
                await asyncio.to_thread(platform.mongo.kill)
                record.victims.append(Victim("mongodb", pid or 0, KILLED))
                try:
                    await asyncio.sleep(knobs.outage_seconds)
                finally:
                    await asyncio.to_thread(platform.mongo.start)
        elif kind == k.AMQP_CLOSE:
            closed = await asyncio.to_thread(platform.rabbit.close_all_connections)
            record.note = f"{closed} connections closed"
        elif kind == k.SCHEDULER_PAUSE:
            name = rng.choice(platform.names("scheduler"))
            await _pause(platform, record, name, knobs.scheduler_pause_seconds)
        elif kind == k.SCHEDULERS_PAUSE:
            names = platform.names("scheduler")
            await asyncio.gather(
                *(_pause(platform, record, n, knobs.scheduler_pause_seconds) for n in names)
            )
        elif kind == k.WORKER_PAUSE:
            name = await busiest_worker(platform, rng)
            await _pause(platform, record, name, knobs.worker_pause_seconds)
        elif kind == k.ROLLING_DEPLOY:
            await _rolling_deploy(platform, record)
        elif kind == k.POISON_INPUT:
            await _poison_input(platform, record)
        elif kind == k.FLOW_CONTROL:
            if flow is None:
                raise ValueError("flow-control needs the round's queues")
            await _flow_control(platform, record, rng, flow)
        else:
            raise ValueError(f"unknown fault {kind}")
    except Exception as exc:  # recorded and shown: the round goes on to its checks
        record.error = f"{type(exc).__name__}: {exc}"[:500]
    record.ended = now()
    began = time.monotonic()
    # Give the supervisor a moment to notice a kill before asking who is ready.
    await asyncio.sleep(1.0)
    record.not_ready = await platform.wait_ready(knobs.recover_timeout)
    record.recovered_s = time.monotonic() - began
    return record
