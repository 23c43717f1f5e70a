"""What the processes and the backlog did during ``bench_overload.py``: once a second, each
process's RSS and CPU (/proc), the vhost's queue depths (management API) and the jobs recorded
and not yet terminal (PostgreSQL); then the memory verdict and the backlog peaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from urllib.parse import quote, urlsplit

import asyncpg
import httpx
from bench_loadgen import Traffic
from bench_pipeline import FreshStack, plain, process_cpu_seconds
from prometheus_client.parser import text_string_to_metric_families

from jobs_common.contracts import TERMINAL_STATUSES
from jobs_testing.stack import Stack

TERMINAL = sorted(str(s) for s in TERMINAL_STATUSES)
STAND_IN = "mongo stand-in"


def rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def machine_jiffies() -> tuple[int, int]:
    """Busy and total jiffies of all CPUs together (idle and iowait are not busy)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])  # guest time is already counted in user
    return total - fields[3] - fields[4], total


def stand_in_pid() -> int | None:
    """The nx-27017 MongoDB stand-in, when this process started one (a store, not a service)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid() and b"nx-27017" in (stat.parent / "cmdline").read_bytes():
                return int(stat.parent.name)
    return None


@dataclass(frozen=True)
class Sample:
    t: float  # seconds since the stack was ready
    phase: str
    rss_mb: dict[str, float]
    cpu_s: dict[str, float]
    machine: tuple[int, int]  # busy and total jiffies of every CPU (/proc/stat)
    queues: dict[str, int]  # messages per queue of the vhost
    recorded: int  # rows in jobs
    open_jobs: int  # rows in jobs not terminal
    accepted: int  # 202-accepted jobs so far, every phase
    in_flight: int


class Monitor:
    """Samples every process, the queues and PostgreSQL once a second."""

    def __init__(self, fresh: FreshStack, processes: dict[str, int]) -> None:
        self.fresh = fresh
        self.processes = processes
        self.phase = "idle"
        self.traffic = Traffic()
        self.accepted_before = 0  # by the phases before this one
        self.t0 = time.perf_counter()
        self.samples: list[Sample] = []
        self.stop = asyncio.Event()
        self.queues: dict[str, int] = {}
        # One client for the whole run: building one costs ~20 ms of this loop's time.
        api = urlsplit(fresh.rabbit_server.management_url)
        self.management = httpx.AsyncClient(
            base_url=f"{api.scheme}://{api.hostname}:{api.port}/api",
            auth=(api.username or "guest", api.password or "guest"),
            timeout=5,
        )

    def begin(self, phase: str) -> Traffic:
        """A new phase with traffic of its own."""
        self.accepted_before += len(self.traffic.accepted)
        self.phase, self.traffic = phase, Traffic()
        return self.traffic

    async def queue_depths(self) -> dict[str, int]:
        vhost = quote(self.fresh.vhost, safe="")
        with contextlib.suppress(httpx.HTTPError):
            response = await self.management.get(
                f"/queues/{vhost}", params={"columns": "name,messages"}
            )
            response.raise_for_status()
            self.queues = {q["name"]: int(q.get("messages") or 0) for q in response.json()}
        return self.queues  # the last known depths when the API did not answer

    async def run(self) -> None:
        connection = await asyncpg.connect(plain(self.fresh.database_url))
        try:
            tick = time.perf_counter()
            while not self.stop.is_set():
                row = await connection.fetchrow(
                    "SELECT count(*) AS recorded, "
                    "count(*) FILTER (WHERE status <> ALL($1::text[])) AS open FROM jobs",
                    TERMINAL,
                )
                sample = Sample(
                    t=time.perf_counter() - self.t0,
                    phase=self.phase,
                    rss_mb={n: rss_mb(pid) for n, pid in self.processes.items()},
                    cpu_s={n: process_cpu_seconds(pid) for n, pid in self.processes.items()},
                    machine=machine_jiffies(),
                    queues=await self.queue_depths(),
                    recorded=row["recorded"],
                    open_jobs=row["open"],
                    accepted=self.accepted_before + len(self.traffic.accepted),
                    in_flight=self.traffic.in_flight,
                )
                self.samples.append(sample)
                if len(self.samples) % 10 == 0:
                    self.progress(sample)
                tick += 1.0
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), max(tick - time.perf_counter(), 0))
        finally:
            await connection.close()
            await self.management.aclose()

    def progress(self, s: Sample) -> None:
        before = self.samples[-11] if len(self.samples) > 10 else self.samples[0]
        span = max(s.t - before.t, 1e-9)
        cpu = sum(s.cpu_s.get(n, 0) - before.cpu_s.get(n, 0) for n in s.cpu_s) / span
        busy = (s.machine[0] - before.machine[0]) / max(s.machine[1] - before.machine[1], 1)
        print(
            f"  t={s.t:6.0f}s {s.phase:11} accepted {s.accepted:7,}  in flight "
            f"{s.in_flight:4}  refused {sum(self.traffic.refused.values()):5,}  "
            f"open {s.open_jobs:6,}  queued {sum(s.queues.values()):6,}  "
            f"rss {sum(s.rss_mb.values()):5,.0f} MB  services' cpu {cpu:4.0%} "
            f"(machine busy {busy:.0%})",
            flush=True,
        )

    async def wait_queues_empty(self, timeout: float) -> bool:
        """Wait until every queue of the vhost is empty (as the management API last saw it)."""
        deadline = time.perf_counter() + timeout
        while sum((await self.queue_depths()).values()) > 0:
            if time.perf_counter() > deadline:
                return False
            await asyncio.sleep(1.0)
        return True

    def during(self, phase: str) -> list[Sample]:
        return [s for s in self.samples if s.phase == phase]


def memory_table(monitor: Monitor) -> list[str]:
    load = monitor.during("load")
    third = len(load) // 3
    middle, last = load[third : 2 * third], load[2 * third :]
    first, end = monitor.samples[0], monitor.samples[-1]
    at_load = load[0] if load else first
    load_span = (load[-1].t - load[0].t) if len(load) > 1 else 0.0
    lines = [
        "memory (RSS MB, sampled every second: start = stack ready, load = load start; "
        f"verdict: mean of the last third of the load against the middle third, {len(load)} "
        "load samples)",
        f"  {'process':16} {'start':>7} {'load':>7} {'peak':>7} {'end':>7} {'peak-start':>10} "
        f"{'middle':>7} {'last':>7} {'growth':>7}  verdict   cpu in load",
    ]
    for name in monitor.processes:
        peak = max(s.rss_mb[name] for s in monitor.samples)
        mid = fmean(s.rss_mb[name] for s in middle) if middle else float("nan")
        tail = fmean(s.rss_mb[name] for s in last) if last else float("nan")
        growth = tail - mid
        verdict = "flat" if growth <= max(10.0, 0.05 * mid) else "GROWING"
        cpu = (load[-1].cpu_s[name] - load[0].cpu_s[name]) / load_span if load_span else 0.0
        note = "  (holds every submission in memory)" if name == STAND_IN else ""
        lines.append(
            f"  {name:16} {first.rss_mb[name]:7.0f} {at_load.rss_mb[name]:7.0f} "
            f"{peak:7.0f} {end.rss_mb[name]:7.0f} {peak - first.rss_mb[name]:+10.0f} "
            f"{mid:7.0f} {tail:7.0f} {growth:+7.1f}  {verdict:8} {cpu * 100:5.0f}% of a core" + note
        )
    return lines


def backlog_lines(monitor: Monitor) -> list[str]:
    samples = monitor.during("load") + monitor.during("drain") or monitor.samples
    deepest = max(samples, key=lambda s: sum(s.queues.values()))
    per_queue: dict[str, int] = {}
    for s in samples:
        for name, depth in s.queues.items():
            per_queue[name] = max(per_queue.get(name, 0), depth)
    most_open = max(samples, key=lambda s: s.open_jobs)
    unrecorded = max(samples, key=lambda s: s.accepted - s.recorded)
    peaks = ", ".join(f"{n} {d:,}" for n, d in sorted(per_queue.items()) if d)
    return [
        f"backlog in load and drain: queue depth peak {sum(deepest.queues.values()):,} at "
        f"t={deepest.t:.0f}s ({peaks or 'every queue stayed empty'})",
        f"  non-terminal jobs in PostgreSQL peak {most_open.open_jobs:,} at t={most_open.t:.0f}s; "
        f"accepted but not yet recorded (submission outbox) peak "
        f"{max(unrecorded.accepted - unrecorded.recorded, 0):,} at t={unrecorded.t:.0f}s",
        "  (queue depths come from the management API, which refreshes every ~5 s)",
    ]


async def process_counters(stack: Stack) -> Counter[str]:
    """What the workers and the scheduler counted themselves (their /metrics): handler runs
    (summed over workers), outbox publishes, and messages the scheduler dropped as stale or
    duplicate, by queue. PostgreSQL cannot show a handler that ran again for a stale dispatch."""
    counted: Counter[str] = Counter()
    async with httpx.AsyncClient(timeout=10) as client:
        for name, service in stack.services.items():
            if service.process is None or not name.startswith(("worker", "scheduler")):
                continue
            page = (await client.get(service.url + "/metrics")).text
            for family in text_string_to_metric_families(page):
                for sample in family.samples:
                    if sample.name == "jobs_started_total":
                        counted["handler runs"] += int(sample.value)
                    elif sample.name == "scheduler_outbox_published_total":
                        counted["outbox publishes"] += int(sample.value)
                    elif sample.name == "scheduler_reconciled_total":
                        counted["reconciler re-dispatches"] += int(sample.value)
                    elif sample.name == "scheduler_messages_total" and sample.labels.get(
                        "outcome"
                    ) in ("stale", "duplicate"):
                        key = f"dropped {sample.labels['queue']} {sample.labels['outcome']}"
                        counted[key] += int(sample.value)
    return counted
