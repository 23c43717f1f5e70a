"""How the CLI prints: plain tables and key/value blocks for people, JSON for scripts, and a
progress bar on stderr (only when it is a terminal, so a pipe or a log never gets one)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TextIO

from jobs_client.models import DeadLetter, Job, JobChange, JobType, LogLine, Schedule
from jobs_client.queue_models import Queue
from jobs_client.waiting import WaitProgress

MAX_CELL = 48


def emit_json(value: Any, out: TextIO, *, compact: bool = False) -> None:
    """One JSON document (``compact``: on one line, for streams)."""
    if compact:
        out.write(json.dumps(value, separators=(",", ":"), default=str) + "\n")
    else:
        out.write(json.dumps(value, indent=2, default=str) + "\n")
    out.flush()


def when(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _cell(value: Any) -> str:
    text = "-" if value is None or value == "" else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO) -> None:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    for row in [list(headers), *cells]:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def job_rows(jobs: Sequence[Job]) -> list[list[Any]]:
    return [
        [j.id, j.type, j.status, j.priority, f"{j.attempt}/{j.max_attempts}", when(j.created_at)]
        for j in jobs
    ]


JOB_HEADERS = ("ID", "TYPE", "STATUS", "PRI", "ATTEMPT", "CREATED")


def job_block(job: Job, out: TextIO) -> None:
    """A job as key/value lines, then its payload and result as JSON."""
    pairs: list[tuple[str, Any]] = [
        ("id", job.id),
        ("type", job.type),
        ("status", job.status),
        ("priority", job.priority),
        ("attempt", f"{job.attempt}/{job.max_attempts}"),
        ("submitted by", job.submitted_by),
        ("created", when(job.created_at)),
        ("started", when(job.started_at)),
        ("finished", when(job.finished_at)),
    ]
    if job.run_at is not None:
        pairs.append(("run at", when(job.run_at)))
    if job.depends_on:
        pairs.append(("depends on", ", ".join(job.depends_on)))
    if job.last_error:
        pairs.append(("last error", job.last_error))
    for key, value in pairs:
        out.write(f"{key:<13}{'-' if value is None else value}\n")
    if job.payload is not None:
        out.write("payload      " + json.dumps(job.payload, indent=2).replace("\n", "\n  ") + "\n")
    if job.result is not None:
        out.write("result       " + json.dumps(job.result, indent=2).replace("\n", "\n  ") + "\n")


def log_line(line: LogLine, out: TextIO) -> None:
    stamp = line.at.astimezone().strftime("%H:%M:%S.%f")[:-3]
    out.write(f"{stamp} {line.level.upper():<7} [attempt {line.attempt}] {line.message}\n")
    out.flush()


def change_line(change: JobChange, out: TextIO) -> None:
    stamp = change.at.astimezone().strftime("%H:%M:%S") if change.at else "--:--:--"
    moved = f"{change.from_status or '-'} -> {change.to_status}"
    reason = f"  ({change.reason})" if change.reason else ""
    out.write(f"{stamp}  {change.job_id}  {change.job_type or '-':<18} {moved}{reason}\n")
    out.flush()


def schedule_rows(schedules: Sequence[Schedule]) -> list[list[Any]]:
    return [
        [
            s.id,
            s.name,
            s.cron,
            s.timezone,
            s.job_template.get("type"),
            "paused" if s.paused else "active",
            when(s.next_fire_at),
        ]
        for s in schedules
    ]


def job_type_rows(types: Sequence[JobType]) -> list[list[Any]]:
    return [
        [
            t.type,
            "built-in" if t.builtin else "custom",
            t.queue,
            t.timeout_seconds if t.timeout_seconds is not None else "-",
            t.max_attempts if t.max_attempts is not None else "-",
            t.live_workers,
        ]
        for t in types
    ]


JOB_TYPE_HEADERS = ("TYPE", "KIND", "QUEUE", "TIMEOUT", "ATTEMPTS", "LIVE WORKERS")
SCHEDULE_HEADERS = ("ID", "NAME", "CRON", "TIMEZONE", "TYPE", "STATE", "NEXT FIRE")


def dead_letter_rows(letters: Sequence[DeadLetter]) -> list[list[Any]]:
    return [
        [d.id, d.job_id, d.job_type, d.reason, d.last_error, when(d.created_at)] for d in letters
    ]


DEAD_LETTER_HEADERS = ("ID", "JOB", "TYPE", "REASON", "LAST ERROR", "CREATED")


def queue_rows(queues: Sequence[Queue]) -> list[list[Any]]:
    return [
        [
            q.name,
            "yes" if q.paused else "no",
            f"{q.running}/{'-' if q.max_concurrency is None else q.max_concurrency}",
            q.rate_limit,
            q.waiting,
        ]
        for q in queues
    ]


QUEUE_HEADERS = ("NAME", "PAUSED", "RUNNING/LIMIT", "RATE", "WAITING")


def queue_block(queue: Queue, out: TextIO) -> None:
    """A queue as key/value lines ("-": no limit, no default)."""
    if queue.paused:
        by = f" by {queue.paused_by}" if queue.paused_by else ""
        state = f"paused since {when(queue.paused_at)}{by}"
    else:
        state = "active"
    key = queue.concurrency_key
    timeout = queue.default_timeout_seconds
    pairs: list[tuple[str, Any]] = [
        ("name", queue.name),
        ("id", queue.id),
        ("state", state),
        ("running", queue.running),
        ("waiting", queue.waiting),
        ("max concurrency", queue.max_concurrency),
        ("rate", queue.rate_limit),
        ("concurrency key", f"{key.limit} running per payload.{key.field}" if key else None),
        ("default priority", queue.default_priority),
        ("default timeout", None if timeout is None else f"{timeout} s"),
        ("default retry", queue.default_retry_policy),
        ("created", f"{when(queue.created_at)} by {queue.created_by or '-'}"),
        ("updated", when(queue.updated_at)),
    ]
    for name, value in pairs:
        out.write(f"{name:<18}{'-' if value is None else value}\n")


class ProgressBar:
    """``[##########----------] 5/10 finished  succeeded 4, dead 1`` redrawn in place on
    stderr while a terminal shows it; nothing at all otherwise."""

    WIDTH = 30

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.drawn = False

    def __call__(self, progress: WaitProgress) -> None:
        if not self.enabled:
            return
        filled = round(self.WIDTH * progress.finished / progress.total)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        counts = ", ".join(
            f"{status} {progress.count(status)}"
            for status in ("succeeded", "dead", "cancelled", "running")
            if progress.count(status)
        )
        self.stream.write(
            f"\r[{bar}] {progress.finished}/{progress.total} finished  {counts}\033[K"
        )
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
