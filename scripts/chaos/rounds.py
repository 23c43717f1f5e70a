"""A chaos run: the platform started once, then rounds of load + one fault + checks.

A round: the load (planned from the round's seed) goes out; at a random moment during it the
fault is injected and undone; once every submission is answered and every service is ready
again, the round waits (bounded) for its jobs to finish and the queues to drain, gathers the
facts and checks the invariants. A service still unready after a round is restarted so the
next round starts from a working platform (and the round says so).

A ``flow-control`` round has a second project: a team project of the load's user (an
organization of its own, created through the public API by the first such round of a run).
Before the load its ``default`` queue is limited to ``max_concurrency`` running jobs (every
replica sees a new limit within a second: the round waits ``LIMIT_TAKES_EFFECT``), a second
client submits ``load.plan_limited`` there beside the usual load, and that queue's running
jobs are sampled until the round's jobs are terminal; the fault pauses the load's own
``default`` queue, resumes it and kills a worker (``faults``). Afterwards the limit is
cleared and the queue resumed (again), so later rounds run as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs_common.tenancy import personal_project_id

from .client import GatewayClient
from .facts import LimitedQueue, RoundFacts, collect, cron_fires, sampling, wait_terminal
from .faults import FaultRecord, FlowTargets, inject
from .invariants import RoundInput, evaluate, touched
from .knobs import FLOW_CONTROL, Knobs
from .load import INSTANT, SUCCEED, AcceptedJob, LoadOutcome, plan, plan_limited, run_load
from .platform import ChaosPlatform
from .report import RoundResult, evidence, round_summary, table

OWNER = ("user@test.com", "user123")  # the demo accounts the development stack seeds
ADMIN = ("admin@test.com", "admin123")  # reads the evidence (worker ids are shown to admins)
SETTLE_QUEUES = ("jobs.ready", "jobs.results", "jobs.logs", "jobs.running")
QUEUE = "default"  # every type of the load runs in its project's default queue
# Each scheduler replica re-reads which queues are limited at most once a second (every
# quarter second since 4a297c0; docs/flow-control.md): a limit set this long ago holds in
# every replica.
LIMIT_TAKES_EFFECT = 1.2


@dataclass
class SecondProject:
    """flow-control: the load's user's team project, and a client acting in it."""

    project_id: str
    client: GatewayClient


@dataclass
class RunState:
    schedule_id: str
    cron_checked_until: datetime  # minutes up to here were checked by an earlier round
    second: SecondProject | None = None  # made by the first flow-control round


def utcnow() -> datetime:
    return datetime.now(UTC)


def cron_due_by(fault: FaultRecord, slack: float) -> datetime:
    """Minutes up to this are due now: each had ``slack`` seconds from its start, or from the
    platform being ready again when the fault covered it (a minute whose fire an outage
    held back fires once the scheduler is back, and is checked in a later round)."""
    now = utcnow()
    due_by = now - timedelta(seconds=slack)
    if fault.ended is not None:
        ready = fault.ended + timedelta(seconds=fault.recovered_s or 0.0)
        if ready > due_by:  # no minute can be judged yet: the later rounds will
            return min(due_by, fault.started)
    return due_by


def due_minutes(after: datetime, until: datetime) -> list[datetime]:
    """Minute boundaries in (after, until]."""
    minute = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    minutes = []
    while minute <= until:
        minutes.append(minute)
        minute += timedelta(minutes=1)
    return minutes


async def settle_queues(platform: ChaosPlatform, timeout: float) -> list[dict[str, object]]:
    """Wait (bounded) until the ready, results, running and logs queues are empty; the last
    snapshot of every queue."""
    deadline = time.monotonic() + timeout
    queues: list[dict[str, object]] = []
    while True:
        try:
            queues = await asyncio.to_thread(platform.rabbit.queues)
        except Exception:  # the management API may still be coming back
            queues = []
        busy = [
            q
            for q in queues
            if str(q.get("name", "")).startswith(SETTLE_QUEUES)
            and ("messages" not in q or int(str(q["messages"] or 0)))
        ]
        if (queues and not busy) or time.monotonic() > deadline:
            return queues
        await asyncio.sleep(0.5)


async def api_statuses(client: GatewayClient, ids: list[str]) -> dict[str, str]:
    gate = asyncio.Semaphore(16)

    async def one(job_id: str) -> tuple[str, str]:
        async with gate:
            response = await client.get(f"/api/jobs/{job_id}", retry_for=20)
        return job_id, response.json().get("status", "") if response.status_code == 200 else ""

    return dict(await asyncio.gather(*(one(job_id) for job_id in ids)))


async def second_project(
    platform: ChaosPlatform, client: GatewayClient, state: RunState
) -> SecondProject:
    """The run's second project: an organization of the load's user with one project, made
    through the public API the first time, and a client that acts in it."""
    if state.second is None:
        project_id = await client.create_project(f"chaos {platform.knobs.seed}", "limited")
        other = GatewayClient(
            platform.gateway_url,
            *OWNER,
            give_up_after=platform.knobs.give_up_after,
            project=project_id,
        )
        state.second = SecondProject(project_id, other)
        await other.login()
        await other.wait_project(project_id)
    return state.second


@dataclass(frozen=True)
class FlowRound:
    """What a flow-control round set: the fault's targets, the limited queue (sampled) and
    the second project's load."""

    targets: FlowTargets
    limited: LimitedQueue
    limited_queue_id: str
    second: SecondProject


async def set_limits(platform: ChaosPlatform, client: GatewayClient, state: RunState) -> FlowRound:
    """Limit the second project's default queue, find the load's own (to pause), and wait
    until every scheduler replica sees the limit."""
    knobs = platform.knobs
    second = await second_project(platform, client, state)
    own = str(personal_project_id(OWNER[0]))
    limited = await client.queue(second.project_id, QUEUE)
    await client.change_queue(limited["id"], maxConcurrency=knobs.max_concurrency)
    paused = await client.queue(own, QUEUE)
    await asyncio.sleep(LIMIT_TAKES_EFFECT)
    return FlowRound(
        targets=FlowTargets(client, own, QUEUE, paused["id"], second.project_id),
        limited=LimitedQueue(second.project_id, QUEUE, knobs.max_concurrency),
        limited_queue_id=limited["id"],
        second=second,
    )


async def lift_limits(flow: FlowRound) -> str:
    """The paused queue resumed (idempotent: the fault resumed it already) and the limit
    cleared; a note when either failed."""
    client = flow.targets.client
    try:
        await client.pause_queue(flow.targets.paused_queue_id, paused=False)
        await client.change_queue(flow.limited_queue_id, maxConcurrency=None)
    except RuntimeError as exc:
        return f"queues not restored after the round: {exc}"
    return ""


async def run_round(
    number: int,
    seed: int,
    kind: str,
    platform: ChaosPlatform,
    client: GatewayClient,
    admin: GatewayClient,
    state: RunState,
) -> RoundResult:
    knobs = platform.knobs
    began = time.monotonic()
    before = client.stats.snapshot()
    rng = random.Random(seed)
    requests = plan(rng, knobs.load, number)
    fault_at = rng.uniform(0.15, 0.7) * knobs.load.seconds
    fault_rng = random.Random(rng.random())
    url = platform.database_url
    flow = await set_limits(platform, client, state) if kind == FLOW_CONTROL else None
    limited_requests = (
        plan_limited(random.Random(rng.random()), knobs.load, number, knobs.max_concurrency)
        if flow is not None
        else []
    )
    window_start = utcnow() - timedelta(seconds=0.5)

    async def fault_later() -> FaultRecord:
        await asyncio.sleep(fault_at)
        return await inject(kind, platform, fault_rng, flow=None if flow is None else flow.targets)

    async def limited_load() -> LoadOutcome:
        if flow is None:
            return LoadOutcome()
        return await run_load(flow.second.client, limited_requests, knobs.load.max_in_flight)

    async with sampling(url, None if flow is None else flow.limited):
        load, second_load, fault = await asyncio.gather(
            run_load(client, requests, knobs.load.max_in_flight), limited_load(), fault_later()
        )
        load.absorb(second_load)
        expected = dict(load.accepted)
        # Cron jobs whose minute is due are the round's too (checked from the last round
        # on). Never before the schedule existed or an earlier round looked (the window
        # only grows).
        cron_until = max(state.cron_checked_until, cron_due_by(fault, knobs.cron_slack))
        fires = await cron_fires(url, state.schedule_id, state.cron_checked_until)
        fires = [fire for fire in fires if fire.fire_time <= cron_until]
        for fire in fires:
            expected[fire.job_id] = AcceptedJob(fire.job_id, "cron", SUCCEED, "")
        ids = list(expected)
        drained, drain_s = await wait_terminal(url, ids, knobs.drain_timeout)
    restored = await lift_limits(flow) if flow is not None else ""
    queues = await settle_queues(platform, 30.0)
    window_end = utcnow()
    jobs, missing, owner_jobs = await collect(
        url,
        ids,
        owner=OWNER[0],
        window=(window_start, window_end),
        sink=platform.smtp_sink,
    )
    facts = RoundFacts(
        jobs=jobs,
        missing=missing,
        owner_jobs=owner_jobs,
        cron_fires=fires,
        queues=queues,
        api_status=await api_statuses(client, list(jobs)),
        limited=None if flow is None else flow.limited,
    )
    data = RoundInput(
        fault=fault,
        jobs=facts.jobs,
        expected=expected,
        missing=facts.missing,
        owner_jobs=facts.owner_jobs,
        given_up=len(load.given_up),
        refused=load.refused,
        queues=facts.queues,
        api_status=facts.api_status,
        cron_minutes=due_minutes(state.cron_checked_until, cron_until),
        cron_fires=facts.cron_fires,
        drained=drained,
        limited=facts.limited,
    )
    state.cron_checked_until = cron_until
    checks = evaluate(data)
    hit = sum(1 for job in jobs.values() if touched(job, fault))
    stats = client.stats.since(before)
    notes = [
        f"load: {load.requests} requests ({load.retried} needed retries, "
        f"{len(load.given_up)} given up), {len(load.accepted)} jobs accepted, "
        f"{len(fires)} cron jobs; fault at +{fault_at:.1f} s; {hit} jobs touched by it; "
        f"jobs finished {drain_s:.1f} s after the load"
        + ("" if drained else f" (NOT within {knobs.drain_timeout:.0f} s)"),
        f"HTTP: {stats.requests} requests, {stats.no_answer} without answer, "
        f"retried statuses {dict(stats.retried_status)}, {stats.logins} logins",
    ]
    if flow is not None:
        notes.append(
            f"second project {flow.second.project_id}: {second_load.requests} requests "
            f"({second_load.retried} needed retries, {len(second_load.given_up)} given up), "
            f"{len(second_load.accepted)} jobs accepted to its {QUEUE} queue limited to "
            f"{knobs.max_concurrency} running (counted in the load above)"
        )
    if restored:
        notes.append(restored)
    result = RoundResult(number, seed, fault, len(expected), checks, 0.0, notes)
    result.evidence = await evidence(admin, platform.run_dir / "logs", checks)
    unready = await asyncio.to_thread(platform.not_ready)
    if unready or not drained:
        if unready:
            result.notes.append(f"still unready after the checks, restarted: {', '.join(unready)}")
            await platform.heal(unready)
        # What the broken platform left behind (cron jobs fired meanwhile, open jobs) is this
        # round's doing: the next round's cron window starts once the platform is whole again.
        await wait_terminal(url, ids, knobs.drain_timeout)
        state.cron_checked_until = utcnow()
        result.notes.append(
            f"cron fires from {cron_until:%H:%M:%S} to {state.cron_checked_until:%H:%M:%S} "
            "not checked (the platform was recovering)"
        )
    result.seconds = time.monotonic() - began
    return result


Printer = Callable[[str], None]


def _print(text: str) -> None:
    print(text, flush=True)


@contextlib.contextmanager
def cancelled_by_sigterm() -> Iterator[None]:
    """SIGTERM (a CI timeout, a ``kill``) cancels the running task instead of ending the
    process at once, so the ``finally`` that stops the platform runs: killed outright, the
    run would leave its private RabbitMQ node, PostgreSQL and services running."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def run(knobs: Knobs, run_dir: Path, out: Printer = _print) -> list[RoundResult]:
    """Start the platform, run every round, stop everything; the rounds' results."""
    with cancelled_by_sigterm():
        return await _run(knobs, run_dir, out)


async def _run(knobs: Knobs, run_dir: Path, out: Printer) -> list[RoundResult]:
    results: list[RoundResult] = []
    platform = ChaosPlatform(knobs, run_dir)
    client: GatewayClient | None = None
    admin: GatewayClient | None = None
    state: RunState | None = None
    report = run_dir / "report.txt"
    try:
        await platform.start()
        client = GatewayClient(platform.gateway_url, *OWNER, give_up_after=knobs.give_up_after)
        await client.login()
        admin = GatewayClient(platform.gateway_url, *ADMIN, give_up_after=knobs.give_up_after)
        await admin.login()
        template = {"type": "simulate", "priority": 2, "payload": INSTANT, "maxAttempts": 5}
        schedule_id = await client.create_schedule(f"chaos-{knobs.seed}", "* * * * *", template)
        state = RunState(schedule_id, utcnow())
        seeds, kinds = knobs.round_seeds(), knobs.round_faults()
        for number, (seed, kind) in enumerate(zip(seeds, kinds, strict=True), start=1):
            out(
                f"\n== round {number}/{knobs.rounds}: seed {seed}, fault {kind} "
                f"(replay: make chaos ROUNDS=1 SEED={seed} FAULTS={kind})"
            )
            result = await run_round(number, seed, kind, platform, client, admin, state)
            results.append(result)
            text = "\n".join([round_summary(result), *result.evidence])
            out(text)
            with report.open("a") as handle:
                handle.write(text + "\n\n")
    finally:
        second = state.second.client if state is not None and state.second else None
        for each in (client, admin, second):
            if each is not None:
                await each.close()
        await platform.close()
    summary = table(results)
    out("\n" + summary)
    with report.open("a") as handle:
        handle.write(summary + "\n")
    return results
