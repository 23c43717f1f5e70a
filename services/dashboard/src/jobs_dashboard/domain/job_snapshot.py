"""A job page's read: the whole job as one snapshot, or why there is none (pure).

The console renders a job only from whole snapshots (header, timeline, attempts and result
read in one transaction, ``JobReader.get_job``), so they never disagree. Where the job store
holds no job visible to the caller, the page must tell a job accepted a moment ago (the
scheduler records it once the submission service's outbox relays it: worth asking again)
from an id that was never submitted or is not the caller's (not found, at once). The answer
is a 200 in every case so the browser logs no error for an expected "not found".
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from jobs_common.api_models import CamelModel
from jobs_dashboard.domain.models import JobDetail


class SnapshotState(StrEnum):
    RECORDED = "recorded"
    ACCEPTED = "accepted"
    NOT_FOUND = "not_found"


class JobSnapshot(CamelModel):
    state: SnapshotState = Field(
        description="recorded: `job` is the job as one consistent read; accepted: the "
        "submission service accepted it and the scheduler has not recorded it yet (ask "
        "again); not_found: no such job is visible to you (never submitted, or not yours)."
    )
    job: JobDetail | None = Field(description="The job when recorded, else null.")


def snapshot_of(detail: JobDetail | None, *, accepted: bool | None) -> JobSnapshot:
    """The page's answer from the job store's read and, where it held nothing, whether the
    submission service accepted the id for this caller (None: it did not say)."""
    if detail is not None:
        return JobSnapshot(state=SnapshotState.RECORDED, job=detail)
    if accepted:
        return JobSnapshot(state=SnapshotState.ACCEPTED, job=None)
    return JobSnapshot(state=SnapshotState.NOT_FOUND, job=None)
