"""The archive of pruned jobs: each job retention removes, written first as one JSON line to a
gzip file of the hour it was archived in, per replica (``jobs-2026-12-03T14-<replica>.jsonl.gz``
under ``SCHEDULER_ARCHIVE_DIR``), and loaded back for inspection
(``python -m jobs_scheduler.archive``; the format: docs/operations.md, "Archive").

A line is written and flushed to disk before the transaction that deletes its job commits; a
transaction that then fails leaves the job in the store, to be archived again by a later pass,
so a job may stand in the archive twice: the loader keeps the first."""

from __future__ import annotations

import gzip
import json
import os
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import UUID as UUIDType
from sqlalchemy.types import DateTime

from jobs_common.jobstore import (
    dead_letters,
    job_attempts,
    job_dependencies,
    job_events,
    job_logs,
    jobs,
)
from jobs_scheduler.adapters.set_based import any_of

FORMAT = 1
_UUID = UUID(as_uuid=True)
# What a record holds besides the job row: its key and the table each list comes from.
BELONGING: dict[str, Table] = {
    "attempts": job_attempts,
    "events": job_events,
    "logs": job_logs,
    "deadLetters": dead_letters,
    "dependsOn": job_dependencies,
}


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not archived")


def _row(table: Table, values: dict[str, Any]) -> dict[str, Any]:
    """A row read back from JSON: the column types PostgreSQL's driver takes."""
    row: dict[str, Any] = {}
    for name, value in values.items():
        column = table.c[name]
        if value is not None and isinstance(column.type, DateTime):
            value = datetime.fromisoformat(value)
        elif value is not None and isinstance(column.type, UUIDType):
            value = uuid.UUID(value)
        row[name] = value
    return row


async def read_records(
    connection: AsyncConnection, job_ids: Sequence[uuid.UUID], archived_at: datetime
) -> list[dict[str, Any]]:
    """Each job of ``job_ids`` with everything that goes with it, as archive records."""
    found = {
        row.id: row._asdict()
        for row in await connection.execute(
            select(jobs).where(jobs.c.id == any_of("ids", _UUID, job_ids))
        )
    }
    belonging: dict[str, dict[uuid.UUID, list[dict[str, Any]]]] = {}
    for key, table in BELONGING.items():
        by_job: dict[uuid.UUID, list[dict[str, Any]]] = defaultdict(list)
        rows = await connection.execute(
            select(table)
            .where(table.c.job_id == any_of("ids", _UUID, job_ids))
            .order_by(*table.primary_key)
        )
        for row in rows:
            by_job[row.job_id].append(row._asdict())
        belonging[key] = by_job
    return [
        {
            "format": FORMAT,
            "archivedAt": archived_at,
            "job": job,
            **{key: belonging[key].get(job_id, []) for key in BELONGING},
        }
        for job_id, job in found.items()
    ]


class JobArchive:
    def __init__(self, directory: Path, replica_id: str) -> None:
        self.directory = directory
        self.replica_id = replica_id

    def path_for(self, at: datetime) -> Path:
        return self.directory / f"jobs-{at:%Y-%m-%dT%H}-{self.replica_id}.jsonl.gz"

    def append(self, records: Sequence[dict[str, Any]], at: datetime) -> Path:
        """Append ``records`` (one gzip member per call) and flush them to disk. Blocking: run
        it in a thread."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(at)
        lines = b"".join(
            json.dumps(record, default=_json, separators=(",", ":")).encode() + b"\n"
            for record in records
        )
        with open(path, "ab") as raw:
            raw.write(gzip.compress(lines))
            raw.flush()
            os.fsync(raw.fileno())
        return path


def read_archive(path: Path) -> Iterator[dict[str, Any]]:
    """The records of an archive file, in the order they were written."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


async def load_records(connection: AsyncConnection, records: Sequence[dict[str, Any]]) -> int:
    """Insert archived jobs with everything that came with them; a job already there (loaded
    before, or archived twice) is kept as it is. Returns how many jobs were inserted."""
    inserted = 0
    for record in records:
        if record.get("format") != FORMAT:
            raise ValueError(f"archive format {record.get('format')!r} is not {FORMAT}")
        job = await connection.execute(
            insert(jobs)
            .values(**_row(jobs, record["job"]))
            .on_conflict_do_nothing()
            .returning(jobs.c.id)
        )
        if job.first() is None:
            continue
        inserted += 1
        for key, table in BELONGING.items():
            rows = [_row(table, values) for values in record[key]]
            if rows:
                await connection.execute(insert(table).on_conflict_do_nothing(), rows)
    return inserted
