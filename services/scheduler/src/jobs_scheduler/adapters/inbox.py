"""The ``inbox``: the message ids of the commands and broker dead letters already applied,
written in the transaction of their effect, so a redelivered one changes nothing."""

from __future__ import annotations

import uuid

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.jobstore import inbox


async def claim_inbox(connection: AsyncConnection, message_id: uuid.UUID, queue: str) -> bool:
    """Record a command's message id; False when it was applied before."""
    inserted = await connection.execute(
        insert(inbox)
        .values(message_id=message_id, queue=queue)
        .on_conflict_do_nothing()
        .returning(inbox.c.message_id)
    )
    return inserted.first() is not None
