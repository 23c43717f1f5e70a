"""``make bench-compare``: our pipeline, Celery and Dramatiq, same N, same broker and
PostgreSQL, in one run, and the ratios that matter (issue 6).

Our single-request path (64 HTTP clients through the gateway) is compared with Celery, our
batch path with Dramatiq, end to end. Ours runs as ``make bench`` runs it
(``bench_pipeline.run``): every phase on the empty stores, then again with the history loaded
(HISTORY_JOBS jobs in PostgreSQL, HISTORY_SUBMISSIONS submissions in MongoDB; HISTORY=0: the
empty stores only), services at their default log level. Only ratios mean anything on a
shared 2-core machine: each figure moves with whatever else runs, and the machine's speed
itself drifts by a third within minutes (the same phase on the same stack, minutes apart:
222 and 274 jobs/s). So each baseline runs right before the phase it is compared with, in
each block: Celery (its result tables empty), then our single requests; Dramatiq, then our
batch; our stack idles meanwhile. ``REPEAT=k`` runs k such rounds and prints each round's
ratios and their medians. Every run's outcomes are checked (each job succeeded once, ours on
its first attempt); the script exits non-zero when one was not.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys

import bench_baselines
import bench_pipeline


def per_thousand(cpu_seconds: float, n: int) -> float:
    return cpu_seconds / n * 1000


Ratios = dict[str, tuple[float, float]]  # block -> (single vs Celery, batch vs Dramatiq)


BASELINE_FOR = {
    "single": bench_baselines.run_celery_async,
    "batch": bench_baselines.run_dramatiq_async,
}


async def compare(n: int, concurrency: int, workers: int) -> tuple[bool, Ratios]:
    """One round: ours (each block), each phase after its own Celery or Dramatiq run; whether
    every outcome held, and each block's two ratios."""
    baselines: dict[tuple[str, str], bench_baselines.BaselineReport] = {}

    async def baseline_before(label: str, phase: str) -> None:
        print(f"\n(the {phase} phase's baseline, run next to it)", flush=True)
        baselines[label, phase] = await BASELINE_FOR[phase](n, concurrency)
        await bench_pipeline.wait_until_quiet(timeout=30.0)  # its processes' exit and writes

    blocks = await bench_pipeline.run(
        n,
        concurrency,
        workers,
        history=bench_pipeline.HistorySize.from_environment(),
        log_level=os.environ.get("LOG_LEVEL") or None,
        before=baseline_before,
    )
    print(f"\nratios, end to end, N={n}, {concurrency} clients, {workers} workers:")
    ratios: Ratios = {}
    for label, phases in blocks.items():
        single, batch = phases[:2]  # the third phase (half of peak) has no baseline
        celery, dramatiq = baselines[label, "single"], baselines[label, "batch"]
        print(f"  ours, {label}, each beside the baseline run just before it:")
        bench_baselines.print_table([celery, dramatiq])
        rows = [
            ("single requests vs Celery", single.end_to_end_per_s, celery["end_to_end_per_s"]),
            ("batch vs Dramatiq", batch.end_to_end_per_s, dramatiq["end_to_end_per_s"]),
        ]
        for name, mine, theirs in rows:
            print(f"    {name:28} {mine:7.0f} / {theirs:7.0f} jobs/s = {mine / theirs:5.2f}x")
        print(
            "    CPU-seconds per 1,000 jobs (ours: every service process; theirs: the "
            f"workers): ours single {per_thousand(single.cpu_s, n):.1f}, ours batch "
            f"{per_thousand(batch.cpu_s, n):.1f}, Celery "
            f"{per_thousand(celery['cpu_seconds'], n):.1f}, Dramatiq "
            f"{per_thousand(dramatiq['cpu_seconds'], n):.1f}"
        )
        (_, s_ours, s_theirs), (_, b_ours, b_theirs) = rows
        ratios[label] = (s_ours / s_theirs, b_ours / b_theirs)
    ours_clean = all(p.outcomes.clean for phases in blocks.values() for p in phases)
    clean = ours_clean and all(report["ok"] for report in baselines.values())
    if not clean:
        print("\nbench-compare FAILED: an outcome check did not hold (see above)")
    return clean, ratios


async def rounds(n: int, concurrency: int, workers: int, repeat: int) -> bool:
    ok = True
    by_block: dict[str, list[tuple[float, float]]] = {}
    for index in range(repeat):
        if repeat > 1:
            print(f"\n===== round {index + 1} of {repeat} =====")
        clean, ratios = await compare(n, concurrency, workers)
        ok = ok and clean
        for label, pair in ratios.items():
            by_block.setdefault(label, []).append(pair)
    if repeat > 1:
        print(f"\nratios over {repeat} rounds (each phase of ours after its own baseline run):")
        for label, pairs in by_block.items():
            print(f"  ours, {label}:")
            for name, column in (("single vs Celery", 0), ("batch vs Dramatiq", 1)):
                values = [pair[column] for pair in pairs]
                listed = ", ".join(f"{r:.2f}x" for r in values)
                print(f"    {name:18} median {statistics.median(values):.2f}x  ({listed})")
    return ok


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    concurrency = int(os.environ.get("C", "64"))
    workers = int(os.environ.get("WORKERS", "2"))
    repeat = int(os.environ.get("REPEAT", "1"))
    ok = asyncio.run(rounds(n, concurrency, workers, repeat))
    sys.stdout.flush()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
