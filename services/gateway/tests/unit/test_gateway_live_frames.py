"""Live-event frames: who sees which change and line, the JSON of each frame, client frames."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from jobs_common.auth import Identity
from jobs_common.contracts import JobChange, JobChanges, JobLogLine, JobLogTail, JobStatus
from jobs_common.errors import NotFound
from jobs_common.tenancy import personal_project_id
from jobs_gateway.domain import live

pytestmark = pytest.mark.unit

AT = datetime(2030, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
JOB_A = uuid.UUID("00000000-0000-4000-8000-00000000000a")
JOB_B = uuid.UUID("00000000-0000-4000-8000-00000000000b")
JOB_C = uuid.UUID("00000000-0000-4000-8000-00000000000c")
ADMIN = Identity(user_id="u-admin", email="admin@test.com", role="admin")
ALICE = Identity(user_id="u-alice", email="Alice@x.io", role="user")
BOB = Identity(user_id="u-bob", email="bob@x.io", role="user")


def own(identity: Identity) -> str:
    """The personal project, where a job submitted without one goes."""
    return str(personal_project_id(identity.email))


def change(job_id: uuid.UUID, owner: str, to: JobStatus = JobStatus.QUEUED) -> JobChange:
    return JobChange(
        job_id=job_id,
        attempt=1,
        from_status=JobStatus.PENDING,
        to_status=to,
        reason="dispatched",
        job_type="email",
        submitted_by=owner,
        at=AT,
    )


def line(job_id: uuid.UUID, text: str) -> JobLogLine:
    return JobLogLine(
        job_id=job_id, attempt=2, worker_id="worker-7", level="info", message=text, at=AT
    )


def body(frame: live.Frame | None) -> dict[str, Any]:
    assert frame is not None
    decoded: dict[str, Any] = orjson.loads(frame.text)
    assert decoded["type"] == frame.type
    return decoded


def test_a_change_frame_uses_the_public_camel_case_names() -> None:
    frames = live.ChangeFrames(JobChanges(changes=[change(JOB_A, "alice@x.io")]))
    assert body(frames.for_project(own(ALICE))) == {
        "type": "job.changes",
        "changes": [
            {
                "jobId": "00000000-0000-4000-8000-00000000000a",
                "attempt": 1,
                "fromStatus": "pending",
                "toStatus": "queued",
                "reason": "dispatched",
                "jobType": "email",
                "at": "2030-01-02T03:04:05.600000Z",
                "projectId": own(ALICE),
            }
        ],
    }


def test_an_admin_sees_every_change_with_its_owner() -> None:
    frames = live.ChangeFrames(
        JobChanges(changes=[change(JOB_A, "alice@x.io"), change(JOB_B, "bob@x.io")])
    )
    changes = body(frames.for_admins())["changes"]
    assert [(c["jobId"], c["submittedBy"]) for c in changes] == [
        (str(JOB_A), "alice@x.io"),
        (str(JOB_B), "bob@x.io"),
    ]


def test_a_user_sees_only_their_own_changes_case_insensitively_without_the_owner() -> None:
    frames = live.ChangeFrames(
        JobChanges(
            changes=[
                change(JOB_A, "ALICE@X.IO"),
                change(JOB_B, "bob@x.io"),
                change(JOB_C, "alice@x.io", JobStatus.RUNNING),
            ]
        )
    )
    alice = body(frames.for_project(own(ALICE)))["changes"]
    assert [(c["jobId"], c["toStatus"]) for c in alice] == [
        (str(JOB_A), "queued"),
        (str(JOB_C), "running"),
    ]
    assert all("submittedBy" not in c for c in alice)
    bob = body(frames.for_project(own(BOB)))["changes"]
    assert [c["jobId"] for c in bob] == [str(JOB_B)]


def test_no_frame_when_none_of_the_changes_is_the_users() -> None:
    frames = live.ChangeFrames(JobChanges(changes=[change(JOB_A, "bob@x.io")]))
    assert frames.for_project(own(ALICE)) is None
    assert sorted(frames.projects) == [own(BOB)]


def test_a_frame_is_built_once_per_audience() -> None:
    frames = live.ChangeFrames(
        JobChanges(changes=[change(JOB_A, "alice@x.io"), change(JOB_B, "bob@x.io")])
    )
    assert frames.for_admins() is frames.for_admins()
    assert frames.for_project(own(ALICE)) is frames.for_project(own(ALICE))
    other_alice = Identity(user_id="u-alice-2", email="alice@x.io", role="user")
    assert frames.for_project(own(ALICE)) is frames.for_project(own(other_alice))


def test_a_projects_members_hear_each_others_changes_and_no_one_elses() -> None:
    shared = uuid.uuid4()
    in_shared = [
        change(JOB_A, "alice@x.io").model_copy(update={"project_id": shared}),
        change(JOB_B, "bob@x.io").model_copy(update={"project_id": shared}),
    ]
    frames = live.ChangeFrames(JobChanges(changes=[*in_shared, change(JOB_C, "bob@x.io")]))
    heard = body(frames.for_project(str(shared)))["changes"]
    assert [(c["jobId"], c["projectId"]) for c in heard] == [
        (str(JOB_A), str(shared)),
        (str(JOB_B), str(shared)),
    ]
    assert all("submittedBy" not in c for c in heard)
    assert [c["jobId"] for c in body(frames.for_project(own(BOB)))["changes"]] == [str(JOB_C)]
    assert frames.for_project(own(ALICE)) is None


def test_log_lines_only_of_subscribed_jobs_and_the_worker_only_for_admins() -> None:
    frames = live.LogFrames(
        JobLogTail(lines=[line(JOB_A, "a1"), line(JOB_B, "b1"), line(JOB_A, "a2")])
    )
    assert frames.job_ids == (JOB_A, JOB_B)
    assert body(frames.for_subscriber(admin=False, subscriptions={JOB_A, JOB_C})) == {
        "type": "job.logs",
        "lines": [
            {
                "jobId": str(JOB_A),
                "attempt": 2,
                "level": "info",
                "message": "a1",
                "at": "2030-01-02T03:04:05.600000Z",
            },
            {
                "jobId": str(JOB_A),
                "attempt": 2,
                "level": "info",
                "message": "a2",
                "at": "2030-01-02T03:04:05.600000Z",
            },
        ],
    }
    admin_lines = body(frames.for_subscriber(admin=True, subscriptions={JOB_B}))["lines"]
    assert [(x["message"], x["workerId"]) for x in admin_lines] == [("b1", "worker-7")]
    assert frames.for_subscriber(admin=False, subscriptions={JOB_C}) is None
    assert frames.for_subscriber(admin=False, subscriptions=set()) is None


def test_log_frames_are_shared_by_connections_following_the_same_jobs() -> None:
    frames = live.LogFrames(JobLogTail(lines=[line(JOB_A, "a1"), line(JOB_B, "b1")]))
    one = frames.for_subscriber(admin=False, subscriptions={JOB_A})
    assert frames.for_subscriber(admin=False, subscriptions={JOB_A, JOB_C}) is one
    assert frames.for_subscriber(admin=True, subscriptions={JOB_A}) is not one


def test_hello_subscribed_and_error_frames() -> None:
    assert body(live.hello(ALICE)) == {
        "type": "hello",
        "user": {"email": "Alice@x.io", "role": "user"},
    }
    assert body(live.subscribed(JOB_A)) == {"type": "subscribed", "jobId": str(JOB_A)}
    assert body(live.unsubscribed(JOB_A)) == {"type": "unsubscribed", "jobId": str(JOB_A)}
    assert body(live.error(NotFound("job not found"), job_id=JOB_A)) == {
        "type": "error",
        "error": "not_found",
        "message": "job not found",
        "jobId": str(JOB_A),
    }


def test_client_frames_that_parse() -> None:
    text = orjson.dumps({"type": "subscribe", "jobId": str(JOB_A)}).decode()
    assert live.parse_client_frame(text, max_bytes=4096) == live.Subscribe(JOB_A)
    text = orjson.dumps({"type": "unsubscribe", "jobId": str(JOB_B).upper()}).decode()
    assert live.parse_client_frame(text, max_bytes=4096) == live.Unsubscribe(JOB_B)


@pytest.mark.parametrize(
    ("text", "message", "job_id"),
    [
        ("{not json", "frame is not JSON", None),
        ("[1, 2]", "frame must be a JSON object", None),
        ('{"type": "dance", "jobId": "x-1"}', "unknown frame type", "x-1"),
        ('{"jobId": "x-1"}', "unknown frame type", "x-1"),
        ('{"type": "subscribe"}', "jobId (a UUID string) is required", None),
        ('{"type": "subscribe", "jobId": 7}', "jobId (a UUID string) is required", None),
        ('{"type": "subscribe", "jobId": "j-1"}', "jobId must be a UUID", "j-1"),
        ('{"type": "subscribe", "jobId": "' + "x" * 200 + '"}', "frame larger than 64 bytes", None),
        ('{"type": "subscribe", "jobId": "' + "é" * 30 + '"}', "frame larger than 64 bytes", None),
    ],
)
def test_client_frames_that_are_refused(text: str, message: str, job_id: str | None) -> None:
    with pytest.raises(live.BadFrame) as caught:
        live.parse_client_frame(text, max_bytes=64)
    assert caught.value.code == "bad_request"
    assert caught.value.message == message
    assert caught.value.job_id == job_id
