"""Worker log lines and unparseable messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import DateTime, Integer, Text
from sqlalchemy.dialects.postgresql import UUID, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import JobLogLine
from jobs_common.jobstore import job_logs, poison_messages
from jobs_scheduler.adapters.set_based import ArrayRows

LINES = ArrayRows(
    "lines",
    job_id=UUID(as_uuid=True),
    attempt=Integer(),
    worker_id=Text(),
    level=Text(),
    message=Text(),
    at=DateTime(timezone=True),
    message_id=UUID(as_uuid=True),
)
# A redelivered line is stored once (unique message id).
INSERT_LINES = LINES.insert_into(job_logs).on_conflict_do_nothing().returning(job_logs.c.id)


async def store_log_lines(connection: AsyncConnection, lines: Sequence[JobLogLine]) -> int:
    if not lines:
        return 0
    result = await connection.execute(
        INSERT_LINES,
        LINES.params(
            (
                line.job_id,
                line.attempt,
                line.worker_id,
                line.level,
                line.message,
                line.at,
                line.message_id,
            )
            for line in lines
        ),
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
