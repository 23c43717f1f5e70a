"""The archive of pruned jobs, read back (docs/operations.md, "Archive"):

python -m jobs_scheduler.archive show FILE... [--job JOB_ID]
    print the archived records (one JSON document a line), or only one job's
python -m jobs_scheduler.archive load FILE... [--database-url URL]
    insert them into a job store (by default SCHEDULER_DATABASE_URL; migrate a scratch
    database first: python -m jobs_scheduler.migrate URL), for the dashboard or psql;
    a job already there is kept as it is
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from jobs_common.db import create_engine
from jobs_scheduler.adapters.archive import load_records, read_archive


def show(files: Sequence[Path], job_id: str | None) -> int:
    for path in files:
        for record in read_archive(path):
            if job_id is None or record["job"]["id"] == job_id:
                print(json.dumps(record, separators=(",", ":")))
    return 0


async def load(files: Sequence[Path], database_url: str) -> int:
    engine = create_engine(database_url, pool_size=1)
    try:
        total = 0
        for path in files:
            async with engine.begin() as connection:
                inserted = await load_records(connection, list(read_archive(path)))
            print(f"{path}: {inserted} job(s) loaded", file=sys.stderr)
            total += inserted
        print(f"{total} job(s) loaded in all", file=sys.stderr)
        return 0
    finally:
        await engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs_scheduler.archive")
    commands = parser.add_subparsers(dest="command", required=True)
    shown = commands.add_parser("show", help="print archived records")
    shown.add_argument("files", nargs="+", type=Path)
    shown.add_argument("--job", help="only this job id")
    loaded = commands.add_parser("load", help="insert archived jobs into a job store")
    loaded.add_argument("files", nargs="+", type=Path)
    loaded.add_argument("--database-url", help="default: SCHEDULER_DATABASE_URL")
    args = parser.parse_args(argv)
    if args.command == "show":
        return show(args.files, args.job)
    from jobs_scheduler.settings import Settings

    return asyncio.run(load(args.files, args.database_url or Settings().database_url))


if __name__ == "__main__":
    sys.exit(main())
