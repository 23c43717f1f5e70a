"""Live change frames: an owner reads reasons that name no worker and no other person; an admin
reads them as the scheduler wrote them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from jobs_common.auth import Identity
from jobs_common.contracts import JobChange, JobChanges, JobStatus
from jobs_common.tenancy import personal_project_id
from jobs_gateway.domain import live

pytestmark = pytest.mark.unit

AT = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
ADMIN = Identity(user_id="u-admin", email="admin@test.com", role="admin")
ALICE = Identity(user_id="u-alice", email="alice@x.io", role="user")
WORKER = "build-7-4711-1a2b3c4d"


def own(identity: Identity) -> str:
    """The personal project, where a job submitted without one goes."""
    return str(personal_project_id(identity.email))


def change(reason: str) -> JobChange:
    return JobChange(
        job_id=uuid.uuid4(),
        attempt=1,
        from_status=JobStatus.QUEUED,
        to_status=JobStatus.RUNNING,
        reason=reason,
        job_type="email",
        submitted_by="Alice@x.io",
        at=AT,
    )


def reasons(frame: live.Frame | None) -> list[Any]:
    assert frame is not None
    return [c["reason"] for c in orjson.loads(frame.text)["changes"]]


def test_owners_read_no_worker_and_no_administrator() -> None:
    written = [
        f"started on {WORKER}",
        f"worker {WORKER} went silent",
        "cancelled by admin@test.com",
        "cancelled by alice@x.io",
    ]
    frames = live.ChangeFrames(JobChanges(changes=[change(reason) for reason in written]))
    assert reasons(frames.for_project(own(ALICE))) == [
        "started on a worker",
        "the worker went silent",
        "cancelled by an administrator",
        "cancelled by alice@x.io",
    ]
    assert reasons(frames.for_admins()) == written
