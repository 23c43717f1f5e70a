"""Named retry policies as their create command stores them (recording a job reads them:
``adapters/recording.py``)."""

from __future__ import annotations

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import retry_policies
from jobs_common.retry_policy_commands import RetryPolicyCreate, RetryPolicyView


async def create(
    engine: AsyncEngine, policy: RetryPolicyCreate, *, created_by: str
) -> RetryPolicyView | None:
    """Insert a named policy; None when the name is taken."""
    async with engine.begin() as connection:
        row = (
            await connection.execute(
                insert(retry_policies)
                .values(**policy.model_dump(), created_by=created_by)
                .on_conflict_do_nothing(index_elements=[retry_policies.c.name])
                .returning(*retry_policies.c)
            )
        ).first()
    return None if row is None else RetryPolicyView.model_validate(row._mapping)
