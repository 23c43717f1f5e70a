"""The whole machine's busy CPU time, shared by the pipeline bench and the baselines (whose
worker processes import only this much of the bench's code)."""

from __future__ import annotations

import os
from pathlib import Path


def machine_busy_seconds() -> float:
    """CPU time the whole machine spent busy, all cores (/proc/stat), for context."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
