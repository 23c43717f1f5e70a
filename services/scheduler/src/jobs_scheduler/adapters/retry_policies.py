"""Named retry policies as their create command stores them (recording a job reads them:
``adapters/recording.py``)."""

from __future__ import annotations

import uuid

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import retry_policies
from jobs_common.retry_policy_commands import RetryPolicyCreate, RetryPolicyView


async def create(
    engine: AsyncEngine,
    policy: RetryPolicyCreate,
    *,
    created_by: str,
    project_id: uuid.UUID | None,
) -> RetryPolicyView | None:
    """Insert a named policy into ``project_id`` (None: shared by every project); None when
    the name is taken there."""
    values = policy.model_dump()
    async with engine.begin() as connection:
        row = (
            await connection.execute(
                insert(retry_policies)
                .values(**values, created_by=created_by, project_id=project_id)
                .on_conflict_do_nothing(
                    index_elements=[retry_policies.c.project_id, retry_policies.c.name]
                )
                .returning(*retry_policies.c)
            )
        ).first()
    return None if row is None else RetryPolicyView.model_validate(row._mapping)
