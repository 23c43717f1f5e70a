"""``make bench-history``: the console's reads through the gateway, on empty stores and with
history spread over projects.

Starts a fresh stack as ``make bench`` does (``bench_pipeline.start_fresh_stack``: every
service a real process, at its default log level) and creates, through the gateway's own API
as users do, HISTORY_PROJECTS (100) projects in organizations of ten (``layout``): the first
organization has one project, of which the demo user is made a member, the second ten, of
which a registered user (``team@test.com``) is made a member; the admin creates them all.
Three callers read (docs/tenancy.md, "Which project a request acts in"):

- ``user``: the demo user naming its one project with ``X-Project`` (about 1 % of the jobs);
- ``team``: the team member naming none, so its grants cover its organization's ten projects
  and its personal one (about 10 %: the ``project_id IN (...)`` path);
- ``admin``: the platform admin, every project.

It measures each read of ``READS`` per caller on the empty stores, loads the history into the
same stores (``bench_pipeline.load_history``: HISTORY_JOBS, 1,000,000, finished jobs of the
last five days spread evenly over the projects, and HISTORY_SUBMISSIONS, 200,000, published
submissions, then a retention pass over them), measures again, and prints per read and caller
the median of three calls and the p95 of twenty (one call at a time, over a keep-alive
connection, after one call not counted). The target: every console read at p95 under 50 ms.

Exits non-zero when a read does not answer 200, or when a caller's listing (``SCOPE_CHECKS``)
shows a row of a project outside its own or a total other than its projects' jobs.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
from bench_loadgen import KeepAliveClient
from bench_pipeline import HistorySize, load_history, plain, start_fresh_stack

READS = (
    "/api/jobs?pageSize=20",
    "/api/jobs?type=email&sortDirection=asc",
    "/api/jobs/analytics",
    "/api/jobs/analytics/series",
    "/api/jobs/analytics/charts?range=1h",
    "/api/jobs/analytics/charts?range=24h",
    "/api/jobs/analytics/charts?range=7d",
    "/api/jobs/analytics/now",
    "/api/queue-depths",
    "/api/dead-letters",
)
# The listings whose rows must all belong to the caller's projects (the jobs' total too).
SCOPE_CHECKS = ("/api/jobs?pageSize=100", "/api/dead-letters?pageSize=100")
ADMIN = ("admin@test.com", "admin123")
USER = ("user@test.com", "user123")
TEAM = ("team@test.com", "team-bench-123")  # registered by the bench
MEDIAN_OF = 3
P95_OF = 20
TARGET_P95_MS = 50.0
PROJECTS_PER_ORGANIZATION = 10


@dataclass(frozen=True)
class Caller:
    """Who reads: ``project``, the project it names (``X-Project``, an id, as the console
    sends it); ``reads``, the project ids its answers may hold (None: every project)."""

    name: str
    email: str
    password: str
    project: str | None
    reads: frozenset[str] | None

    def describe(self, jobs: int) -> str:
        if self.project is not None:
            how = f"X-Project: {self.project}"
        elif self.reads is not None:
            how = f"no project named: its grants, {len(self.reads)} projects"
        else:
            how = "no project named: the platform admin, every project"
        return f"{self.name:6} {self.email}, {how} ({jobs:,} jobs)"


@dataclass(frozen=True)
class Tenants:
    """What the bench created: every project id (the user's first, then the team's ten),
    the number of organizations, and the callers."""

    projects: tuple[str, ...]
    organizations: int
    callers: tuple[Caller, ...]


@dataclass
class Timings:
    """Milliseconds per (read, caller): the median of three calls, the p95 of twenty."""

    median: dict[tuple[str, str], float] = field(default_factory=dict)
    p95: dict[tuple[str, str], float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def layout(projects: int) -> list[int]:
    """Projects per organization: one (the demo user's), ten (the team's), the rest by ten."""
    if projects < 1 + PROJECTS_PER_ORGANIZATION:
        raise SystemExit(f"HISTORY_PROJECTS={projects}: at least {1 + PROJECTS_PER_ORGANIZATION}")
    rest = projects - 1 - PROJECTS_PER_ORGANIZATION
    step = PROJECTS_PER_ORGANIZATION
    return [1, step, *(min(step, rest - i) for i in range(0, rest, step))]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def load_average() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


async def login(gateway: str, email: str, password: str) -> str:
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        answer = await client.post("/auth/login", json={"email": email, "password": password})
        answer.raise_for_status()
        return str(answer.json()["token"])


def _created(answer: httpx.Response) -> dict[str, Any]:
    if answer.status_code not in (201, 202):
        raise RuntimeError(
            f"{answer.request.method} {answer.request.url.path} answered "
            f"{answer.status_code}: {answer.text[:300]}"
        )
    return dict(answer.json())


async def visible_projects(client: httpx.AsyncClient, token: str) -> frozenset[str]:
    """Every project ``GET /api/projects`` lists to the token's user."""
    found: set[str] = set()
    page = 1
    while True:
        answer = await client.get(
            "/api/projects",
            params={"pageNumber": page, "pageSize": 100},
            headers={"Authorization": f"Bearer {token}"},
        )
        answer.raise_for_status()
        body = answer.json()
        found.update(item["id"] for item in body["items"])
        if page >= body["totalPages"]:
            return frozenset(found)
        page += 1


async def create_tenants(gateway: str, projects: int) -> Tenants:
    """The organizations and projects of :func:`layout` through the gateway's API (as the
    admin, their owner), the team user registered, the two memberships."""
    started = time.perf_counter()
    sizes = layout(projects)
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
        admin = {"Authorization": f"Bearer {await login(gateway, *ADMIN)}"}
        email, password = TEAM
        _created(await client.post("/auth/register", json={"email": email, "password": password}))
        by_organization: list[tuple[str, list[str]]] = []
        for index, size in enumerate(sizes, start=1):
            organization = _created(
                await client.post(
                    "/api/organizations",
                    json={"name": f"Bench organization {index:02d}", "slug": f"bench-{index:02d}"},
                    headers=admin,
                )
            )
            ids = [
                (
                    _created(
                        await client.post(
                            "/api/projects",
                            json={"orgId": organization["id"], "name": f"Project {index:02d}-{n}"},
                            headers=admin,
                        )
                    )
                )["id"]
                for n in range(1, size + 1)
            ]
            by_organization.append((organization["id"], ids))
        (solo_org, (solo,)), (team_org, team) = by_organization[:2]
        for org_id, member in ((solo_org, USER[0]), (team_org, TEAM[0])):
            _created(
                await client.post(
                    f"/api/organizations/{org_id}/members",
                    json={"email": member, "role": "member"},
                    headers=admin,
                )
            )
        team_reads = await visible_projects(client, await login(gateway, *TEAM))
    if not set(team) <= team_reads or len(team_reads) != len(team) + 1:
        raise RuntimeError(f"the team user sees {len(team_reads)} projects, not its 10 and 1")
    callers = (
        Caller("user", *USER, project=solo, reads=frozenset({solo})),
        Caller("team", *TEAM, project=None, reads=team_reads),
        Caller("admin", *ADMIN, project=None, reads=None),
    )
    every = tuple(project for _, ids in by_organization for project in ids)
    print(
        f"created {len(every)} projects in {len(sizes)} organizations ({sizes}) and 2 "
        f"memberships through the gateway's API in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return Tenants(every, len(sizes), callers)


async def timed(client: KeepAliveClient, path: str, calls: int, failures: list[str]) -> list[float]:
    """``calls`` GETs of ``path`` one after the other: each one's milliseconds."""
    took: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        status, body = await client.get(path)
        took.append((time.perf_counter() - started) * 1000)
        if status != 200:
            failures.append(f"GET {path} answered {status}: {body[:200]!r}")
    return took


async def check_scope(
    client: KeepAliveClient, caller: Caller, expected_jobs: int, timings: Timings
) -> None:
    """Each of :data:`SCOPE_CHECKS` as ``caller``: every row's ``projectId`` one of its
    projects; the job listing's ``totalItems`` the number of its projects' jobs (counted in
    SQL) and, when there are any, a page of them."""
    for path in SCOPE_CHECKS:
        status, body = await client.get(path)
        if status != 200:
            timings.failures.append(f"{caller.name}: GET {path} answered {status}: {body[:200]!r}")
            continue
        page = json.loads(body)
        items = page["items"]
        seen = {item["projectId"] for item in items}
        outside = seen - caller.reads if caller.reads is not None else set()
        if outside:
            timings.failures.append(
                f"{caller.name}: GET {path} showed rows of {len(outside)} projects not its own: "
                f"{sorted(outside)[:3]}"
            )
        if path.startswith("/api/jobs"):
            if page["totalItems"] != expected_jobs:
                timings.failures.append(
                    f"{caller.name}: GET {path} counted {page['totalItems']:,} jobs, its "
                    f"projects hold {expected_jobs:,}"
                )
            if expected_jobs and not items:
                timings.failures.append(f"{caller.name}: GET {path} listed no job of its projects")
        timings.notes.append(
            f"{caller.name}: GET {path}: {len(items)} rows of {len(seen)} projects, "
            f"none outside its own"
            if not outside
            else f"{caller.name}: GET {path}: {len(items)} rows, {len(outside)} projects outside"
        )


async def measure_reads(gateway: str, callers: Sequence[Caller], jobs: dict[str, int]) -> Timings:
    timings = Timings()
    for caller in callers:
        client = KeepAliveClient(gateway, timeout=60)
        client.authorize(await login(gateway, caller.email, caller.password))
        if caller.project is not None:
            client.extra_headers += f"X-Project: {caller.project}\r\n".encode()
        try:
            for path in READS:
                await timed(client, path, 1, timings.failures)  # a connection, plans cached
                three = await timed(client, path, MEDIAN_OF, timings.failures)
                twenty = await timed(client, path, P95_OF, timings.failures)
                timings.median[(path, caller.name)] = statistics.median(three)
                timings.p95[(path, caller.name)] = p95(twenty)
            await check_scope(client, caller, jobs[caller.name], timings)
        finally:
            client.close()
    return timings


async def jobs_in_scope(database_url: str, callers: Sequence[Caller]) -> dict[str, int]:
    """The number of jobs each caller's projects hold (all of them for the admin)."""
    connection = await asyncpg.connect(plain(database_url))
    try:
        counts = {}
        for caller in callers:
            if caller.reads is None:
                counts[caller.name] = await connection.fetchval("SELECT count(*) FROM jobs")
            else:
                counts[caller.name] = await connection.fetchval(
                    "SELECT count(*) FROM jobs WHERE project_id = ANY($1::uuid[])",
                    sorted(caller.reads),
                )
    finally:
        await connection.close()
    return counts


async def open_letters(database_url: str) -> int:
    connection = await asyncpg.connect(plain(database_url))
    try:
        return int(
            await connection.fetchval("SELECT count(*) FROM dead_letters WHERE resolved_at IS NULL")
        )
    finally:
        await connection.close()


def table(empty: Timings, full: Timings, callers: Sequence[Caller], held: str) -> str:
    """One row per read and caller: median and p95, empty stores then with history."""

    def cell(timings: Timings, key: tuple[str, str]) -> str:
        mark = " !" if timings.p95[key] > TARGET_P95_MS else ""
        return f"{timings.median[key]:7.1f} {timings.p95[key]:7.1f}{mark:2}"

    width = max(len(path) for path in READS) + 4
    lines = [
        f"\nreads through the gateway, ms (median of {MEDIAN_OF}, p95 of {P95_OF}; "
        f"! = p95 over {TARGET_P95_MS:.0f} ms); with history: {held}",
        f"  {'GET':{width}} {'caller':6}  {'empty stores':>17}  {'with history':>17}",
        f"  {'':{width}} {'':6}  {'median':>7} {'p95':>7}    {'median':>7} {'p95':>7}",
    ]
    for path in READS:
        for caller in callers:
            key = (path, caller.name)
            lines.append(f"  {path:{width}} {caller.name:6}  {cell(empty, key)}  {cell(full, key)}")
    return "\n".join(lines)


async def run(workers: int, size: HistorySize, projects: int, log_level: str | None) -> bool:
    fresh = await start_fresh_stack(workers, log_level)
    try:
        await asyncio.to_thread(fresh.stack.wait_ready, 90.0)
        gateway = fresh.stack.services["gateway"].url
        tenants = await create_tenants(gateway, projects)
        callers = tenants.callers
        print(f"empty stores: measuring ({load_average()})", flush=True)
        empty = await measure_reads(
            gateway, callers, await jobs_in_scope(fresh.database_url, callers)
        )
        print(f"empty stores: measured {len(READS)} reads x {len(callers)} callers", flush=True)
        await load_history(fresh, size, tenants.projects)
        jobs = await jobs_in_scope(fresh.database_url, callers)
        print(f"with history: measuring ({load_average()})", flush=True)
        full = await measure_reads(gateway, callers, jobs)
        print(f"with history: measured ({load_average()})", flush=True)
        held = (
            f"{jobs['admin']:,} jobs in {len(tenants.projects)} projects of "
            f"{tenants.organizations} organizations, "
            f"{await open_letters(fresh.database_url):,} open dead letters"
        )
        print("\ncallers:\n  " + "\n  ".join(c.describe(jobs[c.name]) for c in callers))
        print(table(empty, full, callers, held), flush=True)
        print("\nscope checks:\n  " + "\n  ".join(empty.notes + full.notes), flush=True)
    finally:
        await fresh.close()
    failures = empty.failures + full.failures
    for failure in failures:
        print(f"FAILED: {failure}")
    return not failures


def main() -> None:
    workers = int(os.environ.get("WORKERS", "2"))
    size = HistorySize.from_environment() or HistorySize()
    projects = int(os.environ.get("HISTORY_PROJECTS", "100"))
    ok = asyncio.run(run(workers, size, projects, os.environ.get("LOG_LEVEL") or None))
    sys.stdout.flush()
    if not ok:
        print("\nbench-history FAILED: a read did not answer 200, or showed another project's rows")
        sys.exit(1)


if __name__ == "__main__":
    main()
