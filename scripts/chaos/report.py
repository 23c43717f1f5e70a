"""The invariant table, and the evidence of a broken invariant: each offending job's
timeline and attempts from the public API, and the service log lines that name it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import GatewayClient
from .faults import FaultRecord
from .invariants import BROKEN, INVARIANTS, Check

EVIDENCE_JOBS = 3  # per broken invariant, with their timelines
LOG_LINES = 25  # per job
LOG_FIELDS = ("action", "attempt", "worker_id", "reason", "outcome", "error_class", "to_status")


@dataclass
class RoundResult:
    number: int
    seed: int
    fault: FaultRecord
    jobs: int
    checks: list[Check]
    seconds: float
    notes: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    @property
    def broken(self) -> list[Check]:
        return [check for check in self.checks if check.status == BROKEN]


def table(results: list[RoundResult]) -> str:
    names = [name for name, _ in INVARIANTS]
    header = ["round", "seed", "fault", "jobs", *names]
    rows = [
        [
            str(r.number),
            str(r.seed),
            r.fault.kind,
            str(r.jobs),
            *[next((c.cell() for c in r.checks if c.name == n), "-") for n in names],
        ]
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    legend = [f"  {name:<12} {meaning}" for name, meaning in INVARIANTS]
    return "\n".join([*lines, "", "invariants:", *legend])


def round_summary(result: RoundResult) -> str:
    verdict = (
        "all invariants held"
        if not result.broken
        else ("BROKEN: " + ", ".join(f"{c.name} ({len(c.offenders)})" for c in result.broken))
    )
    lines = [
        f"round {result.number} (seed {result.seed}) {result.fault.kind}: {result.jobs} jobs, "
        f"{result.seconds:.0f} s; {verdict}",
        f"  fault: {result.fault.describe()}",
    ]
    lines += [f"  note: {note}" for note in result.notes]
    for check in result.checks:
        lines += [f"  {check.name}: {note}" for note in check.notes]
        for offender in check.offenders[:10]:
            lines.append(f"  {check.name} BROKEN: {offender.subject}: {offender.why}")
        if len(check.offenders) > 10:
            lines.append(f"  {check.name}: ... {len(check.offenders) - 10} more")
    return "\n".join(lines)


def _time(value: Any) -> str:
    text = str(value or "")
    return text[11:23] if len(text) >= 23 else text


def timeline(job: dict[str, Any]) -> list[str]:
    lines = [
        f"    status {job.get('status')} attempt {job.get('attempt')}/{job.get('maxAttempts')}"
        f" lostCount {job.get('lostCount')} lastError {job.get('lastError')!r}"
    ]
    for entry in job.get("timeline") or []:
        lines.append(
            f"    {_time(entry.get('at'))}  #{entry.get('attempt')} "
            f"{entry.get('fromStatus')} -> {entry.get('toStatus')} ({entry.get('reason')})"
        )
    for attempt in job.get("attempts") or []:
        lines.append(
            f"    attempt {attempt.get('attempt')}: {attempt.get('status')} on "
            f"{attempt.get('workerId')} started {_time(attempt.get('startedAt'))} finished "
            f"{_time(attempt.get('finishedAt'))} {attempt.get('errorClass') or ''} "
            f"{attempt.get('error') or ''}".rstrip()
        )
    return lines


def log_lines(log_dir: Path, job_id: str, limit: int = LOG_LINES) -> list[str]:
    """Lines naming ``job_id`` in every service's log, oldest first (the last ``limit``)."""
    found: list[tuple[str, str]] = []
    for path in sorted(log_dir.glob("*.log")):
        with path.open(errors="replace") as handle:
            for raw in handle:
                if job_id not in raw:
                    continue
                try:
                    entry = json.loads(raw)
                except ValueError:
                    found.append(("", f"{path.stem}: {raw.strip()[:300]}"))
                    continue
                extra = " ".join(f"{k}={entry[k]}" for k in LOG_FIELDS if k in entry)
                found.append(
                    (
                        str(entry.get("ts", "")),
                        f"{_time(entry.get('ts'))} {path.stem} {entry.get('level', '')}: "
                        f"{str(entry.get('message', ''))[:200]} {extra}".rstrip(),
                    )
                )
    found.sort(key=lambda item: item[0])
    return [f"    {line}" for _, line in found[-limit:]]


async def evidence(client: GatewayClient, log_dir: Path, checks: list[Check]) -> list[str]:
    """For each broken invariant, the first offending jobs' timelines and log lines."""
    lines: list[str] = []
    for check in checks:
        if check.status != BROKEN:
            continue
        shown = 0
        for offender in check.offenders:
            if shown >= EVIDENCE_JOBS or len(offender.subject) != 36:
                continue  # not a job id (a queue, a minute, a request)
            shown += 1
            lines.append(f"  [{check.name}] job {offender.subject}: {offender.why}")
            response = await client.get(f"/api/jobs/{offender.subject}", retry_for=10)
            if response.status_code == 200:
                lines += timeline(response.json())
            else:
                lines.append(f"    GET /api/jobs/{offender.subject}: {response.status_code}")
                record = await client.get(f"/api/jobs/{offender.subject}/status", retry_for=10)
                lines.append(f"    its submission record: {record.status_code} {record.text}")
            lines.append("    log lines:")
            lines += log_lines(log_dir, offender.subject)
    return lines
