"""The short chaos pass of ``make test``: the same harness as ``make chaos`` (scripts/chaos),
one small round per fault kind on private infrastructure, failing with the invariant table
(and the evidence of what broke) when an invariant does not hold. SEED=... replays a pass."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scripts.chaos.knobs import QUICK, from_env
from scripts.chaos.report import round_summary, table
from scripts.chaos.rounds import run

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]


async def test_every_invariant_holds_for_one_round_of_each_fault_kind() -> None:
    # Only SEED is taken from the environment here: the pass's size is fixed for CI.
    knobs = replace(QUICK, seed=from_env(QUICK).seed)
    run_dir = ROOT / "var" / "chaos" / f"quick-{time.strftime('%Y%m%d-%H%M%S')}-{knobs.seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    results = await run(knobs, run_dir, out=lines.append)
    broken = [result for result in results if result.broken]
    if os.environ.get("CHAOS_VERBOSE"):
        print("\n".join(lines))
    assert len(results) == knobs.rounds, "\n".join(lines[-40:])
    assert not broken, "\n\n".join(
        [
            f"invariants broke (SEED={knobs.seed}; logs in {run_dir}):",
            table(results),
            *("\n".join([round_summary(r), *r.evidence]) for r in broken),
        ]
    )
