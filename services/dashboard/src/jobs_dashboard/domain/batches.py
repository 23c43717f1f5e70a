"""Batches (pure): progress (counts of the members by status, finished or not), the id
prefix a listing is filtered by, and the answer to a retry of the dead members."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime

from pydantic import Field

from jobs_common.api_models import CamelModel, Page
from jobs_common.contracts import TERMINAL_STATUSES, JobStatus
from jobs_dashboard.domain.analytics import status_counts


class BatchView(CamelModel):
    batch_id: uuid.UUID
    submitted_by: str
    project_id: uuid.UUID
    total: int = Field(description="Jobs submitted in the batch.")
    counts: dict[str, int] = Field(description="Recorded members by status (every status).")
    succeeded: int
    failed: int = Field(description="Members that ended dead (kept for the UI; equals dead).")
    dead: int
    cancelled: int
    recorded: int = Field(description="Members the scheduler has recorded so far.")
    finished: bool = Field(description="Every member recorded and terminal.")
    created_at: datetime


class BatchPage(Page[BatchView]):
    pass


class BatchRetried(CamelModel):
    """``POST /api/batches/{batchId}/retry-failed``: the dead members a retry was asked for."""

    batch_id: uuid.UUID
    job_ids: list[uuid.UUID] = Field(description="The dead members, each retried once.")
    status: str = "retry_requested"


def batch_view(
    *,
    batch_id: uuid.UUID,
    submitted_by: str,
    project_id: uuid.UUID,
    total: int,
    created_at: datetime,
    found: Mapping[str, int],
) -> BatchView:
    counts = status_counts(found)
    recorded = sum(counts.values())
    terminal = sum(counts[status.value] for status in TERMINAL_STATUSES)
    return BatchView(
        batch_id=batch_id,
        submitted_by=submitted_by,
        project_id=project_id,
        total=total,
        counts=counts,
        succeeded=counts[JobStatus.SUCCEEDED.value],
        failed=counts[JobStatus.DEAD.value],
        dead=counts[JobStatus.DEAD.value],
        cancelled=counts[JobStatus.CANCELLED.value],
        recorded=recorded,
        finished=recorded >= total and terminal == recorded,
        created_at=created_at,
    )
