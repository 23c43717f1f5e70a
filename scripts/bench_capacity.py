"""``make bench-capacity``: CPU per job per service at four scales, and the capacity model.

Runs the pipeline bench (``bench_pipeline.run``: a fresh stack, N single requests, one batch of
N, a short paced phase) at four points, WORKERS x SCHEDULERS = 1x1, 2x1, 2x2, 1x2, and prints
per point the end-to-end jobs/s and the CPU-seconds per 1,000 jobs of each service (replicas
summed) and of PostgreSQL and RabbitMQ beside them (``bench_pipeline.BESIDE``: the bench
database's backends, the one broker). Then the model of docs/scaling.md ("A capacity model"):
for 1k, 10k and 50k jobs/s, replicas per service = target x CPU-seconds per job / usable cores
per replica, and the cores PostgreSQL and RabbitMQ would need; and two checks against the
measured points (CPU per job flat across replica counts; the throughput the machine's cores
allow against the one measured). Figures, not assertions; exits non-zero when a noop job did
not succeed on its first attempt, as the pipeline bench does.
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
import statistics
import sys
from contextlib import AbstractContextManager
from dataclasses import dataclass
from unittest import mock

import bench_pipeline
from bench_pipeline import CORES, Phase

from jobs_testing.stack import StackConfig

POINTS = ((1, 1), (2, 1), (2, 2), (1, 2))  # (workers, schedulers)
TARGETS = (1_000, 10_000, 50_000)  # jobs/s
SERVICES = ("gateway", "submission", "scheduler", "worker", "dashboard")
# One replica is one Python process: one core at most (the GIL), planned at 70 % of it so a
# burst or a slow neighbour does not queue work at once.
USABLE_CORES_PER_REPLICA = 0.7
# The largest single PostgreSQL primary the model allows, planned at 70 % of its cores.
PRIMARY_CORES = 64
PRIMARY_USABLE = 0.7


def schedulers(count: int) -> AbstractContextManager[object]:
    """bench_pipeline.start_fresh_stack starts one scheduler (StackConfig's default): while
    this is open, the StackConfig it builds asks for ``count`` (replicas on free ports)."""
    return mock.patch.object(
        bench_pipeline, "StackConfig", functools.partial(StackConfig, schedulers=count)
    )


@dataclass
class Point:
    workers: int
    schedulers: int
    single: Phase
    batch: Phase
    clean: bool
    load: float  # the machine's 1-minute load average when the point ended

    @property
    def label(self) -> str:
        return f"{self.workers}w x {self.schedulers}s"


def per_job(phase: Phase, name: str) -> float:
    """CPU-seconds per job of ``name`` (a service, or postgresql / rabbitmq beside them)."""
    cpu = phase.cpu_by_service.get(name, phase.cpu_beside.get(name, 0.0))
    return cpu / phase.n


def cores_used(phase: Phase, name: str, replicas: int) -> float:
    """Cores one replica of ``name`` used on average over the phase."""
    return phase.cpu_by_service.get(name, 0.0) / phase.total_s / replicas


def on_empty_stores(result: list[Phase] | dict[str, list[Phase]]) -> list[Phase]:
    """bench_pipeline.run's phases on the fresh stack's empty stores: its list, or the first
    of its blocks by label (the later ones run with a history loaded)."""
    return next(iter(result.values())) if isinstance(result, dict) else result


async def measure(n: int, concurrency: int, half_peak_seconds: float) -> list[Point]:
    points = []
    for workers, count in POINTS:
        print(f"\n=== {workers} worker(s), {count} scheduler(s) ===", flush=True)
        with schedulers(count):
            result = await bench_pipeline.run(
                n, concurrency, workers, half_peak_seconds=half_peak_seconds
            )
        phases = on_empty_stores(result)
        clean = all(phase.outcomes.clean for phase in phases)
        load = os.getloadavg()[0]
        points.append(Point(workers, count, phases[0], phases[1], clean, load))
    return points


def replicas(point: Point, name: str) -> int:
    return {"worker": point.workers, "scheduler": point.schedulers}.get(name, 1)


def print_points(points: list[Point], phase_of: str) -> None:
    print(f"\n{phase_of}: jobs/s end to end and CPU-seconds per 1,000 jobs")
    columns = [*SERVICES, "ours", "postgresql", "rabbitmq"]
    print(f"  {'point':9} {'jobs/s':>7} " + " ".join(f"{c:>10}" for c in columns) + "   busy")
    for point in points:
        phase: Phase = getattr(point, phase_of)
        figures = [per_job(phase, name) * 1000 for name in SERVICES]
        figures.append(phase.cpu_s / phase.n * 1000)
        figures += [per_job(phase, name) * 1000 for name in ("postgresql", "rabbitmq")]
        print(
            f"  {point.label:9} {phase.end_to_end_per_s:7.0f} "
            + " ".join(f"{f:10.2f}" for f in figures)
            + f"   {phase.machine_busy:4.0%}"
        )
    print("  cores one replica used (worker and scheduler: each of its replicas):")
    for point in points:
        phase = getattr(point, phase_of)
        used = ", ".join(
            f"{name} {cores_used(phase, name, replicas(point, name)):.2f}" for name in SERVICES
        )
        print(f"  {point.label:9} {used}")


def model(points: list[Point]) -> None:
    singles = [point.single for point in points]
    cost = {
        name: statistics.median(per_job(phase, name) for phase in singles)
        for name in (*SERVICES, "postgresql", "rabbitmq")
    }
    print(
        "\nModel (single requests; median CPU-s per job over the points; "
        f"{USABLE_CORES_PER_REPLICA:.0%} of a core per replica):"
    )
    print(f"  {'jobs/s':>7} " + " ".join(f"{s:>10}" for s in SERVICES) + "   postgresql  rabbitmq")
    for target in TARGETS:
        counts = [math.ceil(target * cost[name] / USABLE_CORES_PER_REPLICA) for name in SERVICES]
        print(
            f"  {target:7} "
            + " ".join(f"{c:10d}" for c in counts)
            + f"   {target * cost['postgresql']:7.1f} cores {target * cost['rabbitmq']:5.1f} cores"
        )
    ceiling = PRIMARY_CORES * PRIMARY_USABLE / cost["postgresql"] if cost["postgresql"] else 0
    print(
        f"  one PostgreSQL primary of {PRIMARY_CORES} cores at {PRIMARY_USABLE:.0%}: about "
        f"{ceiling:,.0f} jobs/s at {cost['postgresql'] * 1000:.2f} CPU-ms per job"
    )
    print("\nCheck 1, the model's premise: CPU-ms per job of a service stays put as replicas are")
    print("added (the points' single-request phases; max/min across them):")
    print("  " + f"{'':11}" + " ".join(f"{point.label:>9}" for point in points) + "   max/min")
    for name in (*SERVICES, "postgresql", "rabbitmq"):
        values = [per_job(point.single, name) * 1000 for point in points]
        spread = max(values) / min(values) if min(values) > 0 else float("nan")
        print(f"  {name:11}" + " ".join(f"{v:9.2f}" for v in values) + f"   {spread:7.2f}")
    print(f"\nCheck 2, throughput: {CORES} cores over every process's CPU per job, if the")
    print("machine were the stack's alone, against what was measured and the machine's load:")
    for point in points:
        phase = point.single
        whole = (phase.cpu_s + sum(phase.cpu_beside.values())) / phase.n
        predicted = CORES / whole
        print(
            f"  {point.label:9} {whole * 1000:5.2f} CPU-ms per job -> {predicted:4.0f} jobs/s; "
            f"measured {phase.end_to_end_per_s:4.0f} ({phase.end_to_end_per_s / predicted:.0%}); "
            f"the stack used {phase.machine_busy:.0%} of the cores, 1-min load average "
            f"{point.load:.1f}"
        )


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    concurrency = int(os.environ.get("C", "64"))
    half_peak_seconds = float(os.environ.get("HALF_PEAK_SECONDS", "5"))
    points = asyncio.run(measure(n, concurrency, half_peak_seconds))
    print(f"\n=== capacity, N={n}, {concurrency} in flight ===")
    print_points(points, "single")
    print_points(points, "batch")
    model(points)
    sys.stdout.flush()
    if not all(point.clean for point in points):
        print("\nbench FAILED: some noop job did not succeed on its first attempt")
        sys.exit(1)


if __name__ == "__main__":
    main()
