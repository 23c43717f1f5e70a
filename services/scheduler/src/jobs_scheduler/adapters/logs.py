"""Worker log lines and unparseable messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobLogLine
from jobs_common.jobstore import job_logs, poison_messages


async def store_log_lines(connection: AsyncConnection, lines: Sequence[JobLogLine]) -> int:
    if not lines:
        return 0
    rows = [
        {
            "job_id": line.job_id,
            "attempt": line.attempt,
            "worker_id": line.worker_id,
            "level": line.level,
            "message": line.message,
            "at": line.at,
            "message_id": line.message_id,
        }
        for line in lines
    ]
    result = await connection.execute(
        insert(job_logs).values(rows).on_conflict_do_nothing().returning(job_logs.c.id)
    )
    return len(result.all())


async def record_poison(
    connection: AsyncConnection,
    *,
    queue: str,
    message_id: str | None,
    reason: str,
    body: bytes,
    headers: dict[str, Any],
) -> None:
    await connection.execute(
        insert(poison_messages).values(
            queue=queue, message_id=message_id, reason=reason[:2000], body=body, headers=headers
        )
    )
