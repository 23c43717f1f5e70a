"""``make chaos``: the platform on private infrastructure under a mixed load, one fault per
round, the invariants checked after every round (package ``scripts/chaos``).

ROUNDS (10), SEED (random; every round prints its own seed and the command that replays it),
FAULTS (comma-separated kinds, default all: kill-scheduler, kill-schedulers, kill-worker,
kill-submission, kill-gateway, kill-dashboard, rabbitmq-stop, rabbitmq-restart, postgres-stop,
mongo-stop, amqp-close, scheduler-pause, schedulers-pause, worker-pause, rolling-deploy,
poison-input, flow-control), LOAD_SECONDS (20), RATE (5 requests/s),
OUTAGE_SECONDS (10), SCHEDULER_PAUSE_SECONDS (30), DRAIN_TIMEOUT (240), QUICK=1 (the short
pass of ``make test``: one small round per kind). Logs and the report go to
var/chaos/<time>-<seed>/. Exits 1 when an invariant broke.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.chaos.knobs import QUICK, Knobs, from_env  # noqa: E402
from scripts.chaos.rounds import run  # noqa: E402


def main() -> int:
    knobs = from_env(QUICK if os.environ.get("QUICK", "") == "1" else Knobs())
    run_dir = ROOT / "var" / "chaos" / f"{time.strftime('%Y%m%d-%H%M%S')}-{knobs.seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"chaos: {knobs.rounds} rounds, SEED={knobs.seed}, faults {', '.join(knobs.faults)}; "
        f"{knobs.schedulers} schedulers, {knobs.workers} workers; run directory {run_dir}",
        flush=True,
    )
    began = time.monotonic()
    results = asyncio.run(run(knobs, run_dir))
    broken = [r for r in results if r.broken]
    print(
        f"\n{len(results)} rounds in {time.monotonic() - began:.0f} s; "
        + (
            f"{len(broken)} with broken invariants (report: {run_dir / 'report.txt'})"
            if broken
            else "every invariant held"
        ),
        flush=True,
    )
    return 1 if broken or len(results) < knobs.rounds else 0


if __name__ == "__main__":
    sys.exit(main())
