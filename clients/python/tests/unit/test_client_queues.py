"""A project's queues in the client and the ``jobs`` CLI, without a server: rates and keys read
from text, the requests ``queue_calls`` builds (only the settings given, None as null), the
reading of a ``QueueView``, ``jobs.queues`` over an in-memory ``/api/queues`` (set creating or
changing, names resolved to ids, errors), and ``jobs queues`` parsing, output and exit codes."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobs_client import (
    AsyncJobsClient,
    ConcurrencyKey,
    Conflict,
    Forbidden,
    JobsClient,
    NotFound,
    Queue,
    QueueDepth,
    RateLimit,
    Retries,
    queue_calls,
)
from jobs_client.cli import commands, output
from jobs_client.cli.main import run
from jobs_client.cli.parser import build_parser

pytestmark = pytest.mark.unit

URL = "http://jobs.invalid"
EMAIL = "admin@test.com"
CREATED = "2026-01-02T03:04:05Z"
UPDATED = "2026-01-02T04:00:00+00:00"
EMAILS_ID = "5b2f8a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"

VIEW: dict[str, Any] = {
    "id": EMAILS_ID,
    "projectId": "9d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a",
    "name": "emails",
    "maxConcurrency": 5,
    "rateLimit": {"limit": 20, "per": "second"},
    "concurrencyKey": {"field": "customerId", "limit": 2},
    "paused": True,
    "pausedAt": "2026-01-02T05:00:00Z",
    "pausedBy": EMAIL,
    "defaultPriority": 3,
    "defaultTimeoutSeconds": 60,
    "defaultRetryPolicy": "gentle",
    "createdBy": EMAIL,
    "createdAt": CREATED,
    "updatedAt": UPDATED,
    "waiting": 7,
    "running": 4,
}

#: VIEW's settings when none is set: no limit, no default, not paused.
NO_SETTINGS: dict[str, Any] = {
    "maxConcurrency": None,
    "rateLimit": None,
    "concurrencyKey": None,
    "paused": False,
    "pausedAt": None,
    "pausedBy": None,
    "defaultPriority": None,
    "defaultTimeoutSeconds": None,
    "defaultRetryPolicy": None,
}


# --- rates and concurrency keys from text ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rate"),
    [
        ("20/s", RateLimit(20, "second")),
        ("20/second", RateLimit(20, "second")),
        ("600/m", RateLimit(600, "minute")),
        ("600/min", RateLimit(600, "minute")),
        ("600/minute", RateLimit(600, "minute")),
        (" 1/s\n", RateLimit(1, "second")),
    ],
)
def test_a_rate_is_read_from_its_short_and_long_forms(text: str, rate: RateLimit) -> None:
    assert RateLimit.parse(text) == rate
    assert RateLimit.parse(str(rate)) == rate  # str() writes what parse reads


@pytest.mark.parametrize(
    "text",
    ["", "20", "20/", "/s", "20/h", "20/hour", "20/sec", "20/S", "20 /s", "0/s", "-5/s", "2.5/s",
     "20/s/s", "twenty/s", "20/minutes", "٢٠/s"],
)  # fmt: skip
def test_anything_else_is_not_a_rate(text: str) -> None:
    with pytest.raises(ValueError, match="not a rate"):
        RateLimit.parse(text)


def test_a_concurrency_key_is_a_field_and_a_limit() -> None:
    assert ConcurrencyKey.parse("customerId:2") == ConcurrencyKey("customerId", 2)
    assert str(ConcurrencyKey("tenant", 10)) == "tenant:10"
    for bad in ("customerId", "customerId:", ":2", "customerId:0", "customerId:x", "a:-1"):
        with pytest.raises(ValueError, match="not a concurrency key"):
            ConcurrencyKey.parse(bad)


# --- the requests queue_calls builds --------------------------------------------------------


def test_settings_send_only_what_was_given_and_none_as_null() -> None:
    assert queue_calls.queue_settings() == {}
    assert queue_calls.queue_settings(max_concurrency=None, rate=None, concurrency_key=None) == {
        "maxConcurrency": None,
        "rateLimit": None,
        "concurrencyKey": None,
    }
    assert queue_calls.queue_settings(
        max_concurrency=5,
        rate="600/min",
        concurrency_key="customerId:2",
        default_priority=1,
        default_timeout_seconds=30,
        default_retry_policy="gentle",
    ) == {
        "maxConcurrency": 5,
        "rateLimit": {"limit": 600, "per": "minute"},
        "concurrencyKey": {"field": "customerId", "limit": 2},
        "defaultPriority": 1,
        "defaultTimeoutSeconds": 30,
        "defaultRetryPolicy": "gentle",
    }
    objects = queue_calls.queue_settings(
        rate=RateLimit(3, "second"), concurrency_key=ConcurrencyKey("a", 1)
    )
    assert objects == {
        "rateLimit": {"limit": 3, "per": "second"},
        "concurrencyKey": {"field": "a", "limit": 1},
    }
    with pytest.raises(ValueError, match="not a rate"):
        queue_calls.queue_settings(rate="fast")
    with pytest.raises(TypeError, match="not a queue setting: max_concurency"):
        queue_calls.queue_settings(max_concurency=5)  # type: ignore[call-arg]


def test_queue_calls_name_the_routes_of_the_api() -> None:
    listing = queue_calls.list_queues(name="emails", page_number=2, page_size=50)
    assert (listing.method, listing.path, listing.replay_safe) == ("GET", "/api/queues", True)
    assert listing.params == (("name", "emails"), ("pageNumber", "2"), ("pageSize", "50"))
    every = queue_calls.list_queues(name=None, page_number=1, page_size=100)
    assert every.params == (("pageNumber", "1"), ("pageSize", "100"))  # no projectId: X-Project

    got = queue_calls.get_queue(EMAILS_ID)
    assert (got.method, got.path, got.replay_safe) == ("GET", f"/api/queues/{EMAILS_ID}", True)
    assert queue_calls.get_queue("../x").path == "/api/queues/..%2Fx"

    created = queue_calls.create_queue(
        "emails", {"maxConcurrency": 5, "rateLimit": None}, paused=True
    )
    assert (created.method, created.path) == ("POST", "/api/queues")
    assert created.body == {"name": "emails", "maxConcurrency": 5, "paused": True}
    assert not created.replay_safe  # a repeat would be a 409
    assert queue_calls.create_queue("emails", {}, paused=None).body == {"name": "emails"}

    patched = queue_calls.update_queue(EMAILS_ID, {"maxConcurrency": None})
    assert (patched.method, patched.path) == ("PATCH", f"/api/queues/{EMAILS_ID}")
    assert patched.body == {"maxConcurrency": None} and patched.replay_safe

    for action in ("pause", "resume"):
        call = queue_calls.queue_action(EMAILS_ID, action)
        assert (call.method, call.path) == ("POST", f"/api/queues/{EMAILS_ID}/{action}")
        assert call.replay_safe
    deleted = queue_calls.delete_queue(EMAILS_ID)
    assert (deleted.method, deleted.path, deleted.replay_safe) == (
        "DELETE",
        f"/api/queues/{EMAILS_ID}",
        False,
    )
    assert deleted.parse(httpx.Response(204)) is None


def test_an_id_is_a_uuid_and_anything_else_a_name() -> None:
    assert queue_calls.is_queue_id(EMAILS_ID) and queue_calls.is_queue_id(EMAILS_ID.upper())
    assert queue_calls.is_queue_id(str(uuid.uuid4()))
    for name in ("emails", "abcdefab-cdef-abcd-efab", "abcdefabcdefabcdefabcdefabcdefab", ""):
        assert not queue_calls.is_queue_id(name)


# --- reading the answer ---------------------------------------------------------------------


def test_a_queue_view_is_read_with_its_limits_and_keeps_the_raw_answer() -> None:
    queue = queue_calls.get_queue(EMAILS_ID).parse(httpx.Response(200, json=VIEW | {"later": 1}))
    assert queue.id == EMAILS_ID and queue.name == "emails"
    assert queue.project_id == VIEW["projectId"]
    assert queue.max_concurrency == 5
    assert queue.rate_limit == RateLimit(20, "second")
    assert queue.concurrency_key == ConcurrencyKey("customerId", 2)
    assert queue.paused and queue.paused_by == EMAIL
    assert queue.paused_at is not None and queue.paused_at.tzinfo is not None
    assert (queue.default_priority, queue.default_timeout_seconds) == (3, 60)
    assert queue.default_retry_policy == "gentle"
    assert queue.created_by == EMAIL and queue.created_at.tzinfo is not None
    assert queue.updated_at.hour == 4
    assert (queue.waiting, queue.running) == (7, 4)
    assert queue.raw["later"] == 1  # unknown fields are ignored, and kept in raw


def test_nulls_read_as_no_limit_and_no_default() -> None:
    bare = {**VIEW, **NO_SETTINGS}
    del bare["waiting"], bare["running"]
    queue = Queue.from_json(bare)
    assert (queue.max_concurrency, queue.rate_limit, queue.concurrency_key) == (None, None, None)
    assert (queue.paused, queue.paused_at, queue.paused_by) == (False, None, None)
    assert (queue.default_priority, queue.default_timeout_seconds) == (None, None)
    assert queue.default_retry_policy is None
    assert (queue.waiting, queue.running) == (0, 0)
    assert (queue.depth, queue.oldest_queued_at, queue.oldest_age_seconds) == ([], None, None)


def test_a_queue_s_depth_and_oldest_queued_job_are_read() -> None:
    queue = Queue.from_json(
        VIEW
        | {
            "depth": [
                {"status": "queued", "priority": 3, "count": 5},
                {"status": "running", "priority": 2, "count": 1},
            ],
            "oldestQueuedAt": "2030-01-02T03:04:05Z",
            "oldestAgeSeconds": 12.5,
        }
    )
    assert queue.depth == [QueueDepth("queued", 3, 5), QueueDepth("running", 2, 1)]
    assert queue.oldest_queued_at is not None and queue.oldest_queued_at.tzinfo is not None
    assert queue.oldest_age_seconds == 12.5


# --- jobs.queues over an in-memory /api/queues ----------------------------------------------


def envelope(status: int, code: str, message: str) -> httpx.Response:
    return httpx.Response(status, json={"error": code, "message": message, "details": []})


@dataclass
class Sent:
    method: str
    path: str
    params: dict[str, str]
    body: Any
    project: str | None


@dataclass
class FakeQueues:
    """``/api/queues`` as the contract describes it, in memory; every request is kept."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    taken_by_someone_else: str | None = None  # a name another client creates first
    refuse: int | None = None  # answer every request with this status

    def add(self, name: str, **fields: Any) -> dict[str, Any]:
        row = {
            **VIEW,
            "id": str(uuid.uuid4()),
            "name": name,
            **NO_SETTINGS,
            "updatedAt": CREATED,
            "waiting": 0,
            "running": 0,
            **fields,
        }
        self.rows[row["id"]] = row
        return row

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.path
        params = dict(request.url.params)
        self.sent.append(Sent(request.method, path, params, body, request.headers.get("x-project")))
        if self.refuse is not None:
            return envelope(self.refuse, "forbidden", "needs admin")
        parts = path.strip("/").split("/")  # api, queues[, id[, action]]
        if parts == ["api", "queues"] and request.method == "GET":
            rows = sorted(self.rows.values(), key=lambda r: r["name"])
            if "name" in params:
                rows = [r for r in rows if r["name"] == params["name"]]
            number, size = int(params["pageNumber"]), int(params["pageSize"])
            return httpx.Response(
                200,
                json={
                    "items": rows[(number - 1) * size : number * size],
                    "pageNumber": number,
                    "pageSize": size,
                    "totalItems": len(rows),
                    "totalPages": max(1, -(-len(rows) // size)),
                },
            )
        if parts == ["api", "queues"] and request.method == "POST":
            if self.taken_by_someone_else == body["name"]:
                self.add(body["name"])
                self.taken_by_someone_else = None
            if any(r["name"] == body["name"] for r in self.rows.values()):
                return envelope(409, "conflict", "queue name already in use")
            settings = {k: v for k, v in body.items() if k != "name"}
            return httpx.Response(201, json=self.add(body["name"], **settings))
        row = self.rows.get(parts[2])
        if row is None:
            return envelope(404, "not_found", "queue not found")
        if len(parts) == 4:
            paused = parts[3] == "pause"
            row |= {"paused": paused, "pausedAt": CREATED if paused else None}
            row["pausedBy"] = EMAIL if paused else None
            return httpx.Response(200, json=row)
        if request.method == "PATCH":
            row |= body | {"updatedAt": UPDATED}
            return httpx.Response(200, json=row)
        if request.method == "DELETE":
            if row["waiting"] or row["running"]:
                return envelope(409, "conflict", "the queue has 3 unfinished jobs")
            del self.rows[row["id"]]
            return httpx.Response(204)
        return httpx.Response(200, json=row)

    def routes(self) -> list[tuple[str, str]]:
        return [(s.method, s.path) for s in self.sent]


@pytest.fixture
def fake() -> FakeQueues:
    return FakeQueues()


@pytest.fixture
def jobs(fake: FakeQueues) -> Iterator[JobsClient]:
    transport = httpx.MockTransport(fake)
    with JobsClient(URL, token="t", transport=transport, retries=Retries(attempts=1)) as client:
        yield client


def test_set_creates_a_missing_queue_with_the_settings_given(
    fake: FakeQueues, jobs: JobsClient
) -> None:
    queue = jobs.queues.set("emails", max_concurrency=5, rate="20/s", concurrency_key=None)
    assert fake.routes() == [("GET", "/api/queues"), ("POST", "/api/queues")]
    assert fake.sent[0].params["name"] == "emails"
    assert fake.sent[1].body == {
        "name": "emails",
        "maxConcurrency": 5,
        "rateLimit": {"limit": 20, "per": "second"},
    }  # a None clears nothing on a new queue: left out
    assert queue.name == "emails" and queue.rate_limit == RateLimit(20, "second")


def test_set_changes_only_the_settings_given_of_an_existing_queue(
    fake: FakeQueues, jobs: JobsClient
) -> None:
    row = fake.add("emails", maxConcurrency=5, defaultPriority=3)
    fake.add("reports")
    queue = jobs.queues.set("emails", max_concurrency=None, rate=RateLimit(600, "minute"))
    assert fake.routes() == [("GET", "/api/queues"), ("PATCH", f"/api/queues/{row['id']}")]
    assert fake.sent[1].body == {
        "maxConcurrency": None,
        "rateLimit": {"limit": 600, "per": "minute"},
    }
    assert queue.max_concurrency is None and queue.default_priority == 3
    assert queue.rate_limit == RateLimit(600, "minute")

    fake.sent.clear()
    assert jobs.queues.set("emails").id == row["id"]  # nothing to change: nothing sent
    assert fake.routes() == [("GET", "/api/queues")]


def test_set_changes_a_queue_created_meanwhile_by_someone_else(
    fake: FakeQueues, jobs: JobsClient
) -> None:
    fake.taken_by_someone_else = "emails"
    queue = jobs.queues.set("emails", max_concurrency=2)
    assert [m for m, _ in fake.routes()] == ["GET", "POST", "GET", "PATCH"]
    assert queue.max_concurrency == 2


def test_update_sends_only_what_was_given(fake: FakeQueues, jobs: JobsClient) -> None:
    row = fake.add("emails", maxConcurrency=5, concurrencyKey={"field": "a", "limit": 1})
    queue = jobs.queues.update(row["id"], concurrency_key=None, default_timeout_seconds=90)
    assert fake.sent[-1].body == {"concurrencyKey": None, "defaultTimeoutSeconds": 90}
    assert queue.concurrency_key is None and queue.max_concurrency == 5


def test_a_bad_rate_is_refused_before_anything_is_sent(fake: FakeQueues, jobs: JobsClient) -> None:
    with pytest.raises(ValueError, match="not a rate"):
        jobs.queues.set("emails", rate="20 per second")
    with pytest.raises(ValueError, match="not a rate"):
        jobs.queues.create("emails", rate="20/h")
    with pytest.raises(ValueError, match="not a concurrency key"):
        jobs.queues.update(EMAILS_ID, concurrency_key="customerId")
    assert fake.sent == []


def test_pause_and_resume_take_a_name_or_an_id(fake: FakeQueues, jobs: JobsClient) -> None:
    row = fake.add("emails")
    paused = jobs.queues.pause("emails")
    assert fake.routes() == [("GET", "/api/queues"), ("POST", f"/api/queues/{row['id']}/pause")]
    assert paused.paused and paused.paused_by == EMAIL
    fake.sent.clear()
    resumed = jobs.queues.resume(row["id"])  # an id: no lookup
    assert fake.routes() == [("POST", f"/api/queues/{row['id']}/resume")]
    assert not resumed.paused

    fake.sent.clear()
    with pytest.raises(NotFound, match="no queue named 'nope'") as missing:
        jobs.queues.pause("nope")
    assert missing.value.code == "not_found"
    assert fake.routes() == [("GET", "/api/queues")]  # nothing paused


def test_list_walks_every_page_and_by_name_finds_one_or_none(
    fake: FakeQueues, jobs: JobsClient
) -> None:
    for name in ("a", "b", "c", "d", "e"):
        fake.add(name)
    assert [q.name for q in jobs.queues.list(page_size=2)] == ["a", "b", "c", "d", "e"]
    assert [s.params["pageNumber"] for s in fake.sent] == ["1", "2", "3"]
    assert [q.name for q in jobs.queues.list("c")] == ["c"]
    found = jobs.queues.by_name("d")
    assert found is not None and found.name == "d"
    assert jobs.queues.by_name("z") is None


def test_get_delete_and_the_api_errors(fake: FakeQueues, jobs: JobsClient) -> None:
    row = fake.add("emails")
    busy = fake.add("busy", waiting=3)
    assert jobs.queues.get(row["id"]).name == "emails"
    jobs.queues.delete(row["id"])
    assert fake.sent[-1].method == "DELETE" and row["id"] not in fake.rows
    with pytest.raises(NotFound):
        jobs.queues.get(row["id"])
    with pytest.raises(Conflict, match="unfinished") as refused:
        jobs.queues.delete(busy["id"])
    assert refused.value.status == 409
    with pytest.raises(Conflict, match="already in use"):
        jobs.queues.create("busy")
    fake.refuse = 403
    with pytest.raises(Forbidden):
        jobs.queues.create("other")


def test_every_queue_call_goes_to_the_clients_project(fake: FakeQueues) -> None:
    transport = httpx.MockTransport(fake)
    with JobsClient(URL, token="t", project="acme/web", transport=transport) as jobs:
        jobs.queues.set("emails", max_concurrency=1)
        jobs.queues.pause("emails")
    assert len(fake.sent) == 4 and {s.project for s in fake.sent} == {"acme/web"}


async def test_the_async_client_has_the_same_queues(fake: FakeQueues) -> None:
    busy = fake.add("busy", running=1)
    transport = httpx.MockTransport(fake)
    async with AsyncJobsClient(URL, token="t", transport=transport) as jobs:
        created = await jobs.queues.create("emails", rate="600/min", paused=True)
        assert created.paused and created.rate_limit == RateLimit(600, "minute")
        assert fake.sent[-1].body == {
            "name": "emails",
            "rateLimit": {"limit": 600, "per": "minute"},
            "paused": True,
        }
        changed = await jobs.queues.set("emails", rate=None, default_priority=1)
        assert changed.rate_limit is None and changed.default_priority == 1
        assert fake.sent[-1].body == {"rateLimit": None, "defaultPriority": 1}
        assert not (await jobs.queues.resume("emails")).paused
        assert (await jobs.queues.pause(created.id)).paused
        assert [q.name async for q in jobs.queues.list(page_size=1)] == ["busy", "emails"]
        assert await jobs.queues.by_name("nope") is None
        updated = await jobs.queues.update(created.id, max_concurrency=3)
        assert updated.max_concurrency == 3 and (await jobs.queues.get(created.id)).paused
        with pytest.raises(NotFound):
            await jobs.queues.resume("nope")
        with pytest.raises(Conflict):
            await jobs.queues.delete(busy["id"])
        await jobs.queues.delete(created.id)
    assert created.id not in fake.rows


# --- the jobs queues command ----------------------------------------------------------------


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("JOBS_URL", "JOBS_TOKEN", "JOBS_API_KEY", "JOBS_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_set_arguments_keep_only_what_was_given() -> None:
    args = build_parser().parse_args(["queues", "set", "emails"])
    assert (args.command, args.action, args.queue) == ("queues", "set", "emails")
    settings = (
        "max_concurrency",
        "rate",
        "concurrency_key",
        "default_priority",
        "default_timeout_seconds",
        "default_retry_policy",
    )
    assert not any(name in args for name in settings)

    args = build_parser().parse_args(
        [
            "queues",
            "set",
            "emails",
            "--max-concurrency",
            "5",
            "--rate",
            "20/s",
            "--concurrency-key",
            "customerId:2",
            "--default-priority",
            "3",
            "--default-timeout",
            "60",
            "--default-retry-policy",
            "gentle",
            "--json",
        ]
    )
    assert args.max_concurrency == 5 and args.rate == RateLimit(20, "second")
    assert args.concurrency_key == ConcurrencyKey("customerId", 2)
    assert (args.default_priority, args.default_timeout_seconds) == (3, 60)
    assert args.default_retry_policy == "gentle" and args.json

    args = build_parser().parse_args(
        ["queues", "set", "emails", "--no-max-concurrency", "--no-rate", "--no-concurrency-key"]
    )
    assert (args.max_concurrency, args.rate, args.concurrency_key) == (None, None, None)
    assert "default_priority" not in args


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["queues"], "ACTION"),
        (["queues", "set"], "NAME"),
        (["queues", "set", "q", "--rate", "20/h"], "not a rate"),
        (["queues", "set", "q", "--rate", "20/s", "--no-rate"], "not allowed with"),
        (["queues", "set", "q", "--max-concurrency", "5", "--no-max-concurrency"], "not allowed"),
        (["queues", "set", "q", "--max-concurrency", "many"], "invalid int"),
        (["queues", "set", "q", "--concurrency-key", "customerId"], "not a concurrency key"),
        (["queues", "set", "q", "--default-priority", "4"], "invalid choice"),
        (["queues", "show"], "NAME"),
        (["queues", "pause", "a", "b"], "unrecognized"),
        (["queues", "drain", "q"], "invalid choice"),
    ],
)
def test_queue_usage_errors_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == commands.USAGE
    err = capsys.readouterr().err
    assert "usage: jobs" in err and says in err


def test_the_queue_commands_take_the_project_and_the_key_like_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def client(*argv: str) -> JobsClient:
        return commands.Context(build_parser().parse_args(["queues", *argv])).client()

    with client("list", "--project", "acme/web", "--api-key", "jk_a") as flagged:
        assert flagged.project == "acme/web"
        assert flagged.tokens is not None and flagged.tokens.access_token == "jk_a"
    monkeypatch.setenv("JOBS_PROJECT", "ops")
    monkeypatch.setenv("JOBS_API_KEY", "jk_env")
    with client("set", "emails", "--rate", "1/s") as from_env:
        assert from_env.project == "ops"
        assert from_env.tokens is not None and from_env.tokens.access_token == "jk_env"


@dataclass
class Cli:
    fake: FakeQueues
    out: io.StringIO = field(default_factory=io.StringIO)
    err: io.StringIO = field(default_factory=io.StringIO)

    def __call__(self, *argv: str) -> int:
        self.out, self.err = io.StringIO(), io.StringIO()
        return run(["queues", *argv], out=self.out, err=self.err)


@pytest.fixture
def cli(fake: FakeQueues, monkeypatch: pytest.MonkeyPatch) -> Cli:
    def client(ctx: commands.Context) -> JobsClient:
        transport = httpx.MockTransport(fake)
        return JobsClient(URL, token="t", transport=transport, retries=Retries(attempts=1))

    monkeypatch.setattr(commands.Context, "client", client)
    return Cli(fake)


def test_jobs_queues_set_creates_then_changes_and_prints_the_queue(cli: Cli) -> None:
    code = cli(
        "set", "emails", "--max-concurrency", "5", "--rate", "20/s", "--default-timeout", "60"
    )
    assert code == commands.OK, cli.err.getvalue()
    assert cli.fake.sent[-1].body == {
        "name": "emails",
        "maxConcurrency": 5,
        "rateLimit": {"limit": 20, "per": "second"},
        "defaultTimeoutSeconds": 60,
    }
    shown = cli.out.getvalue()
    assert "name              emails\n" in shown
    assert "max concurrency   5\n" in shown and "rate              20/second\n" in shown
    assert "default timeout   60 s\n" in shown and "concurrency key   -\n" in shown

    assert cli("set", "emails", "--no-rate", "--concurrency-key", "customerId:2", "--json") == 0
    assert cli.fake.sent[-1].method == "PATCH"
    assert cli.fake.sent[-1].body == {
        "rateLimit": None,
        "concurrencyKey": {"field": "customerId", "limit": 2},
    }
    answer = json.loads(cli.out.getvalue())
    assert answer["rateLimit"] is None and answer["maxConcurrency"] == 5  # the API's camelCase


def test_jobs_queues_list_is_a_table_or_the_api_answer(cli: Cli) -> None:
    cli.fake.add(
        "emails", maxConcurrency=5, running=3, waiting=12, rateLimit={"limit": 20, "per": "second"}
    )
    cli.fake.add("reports", paused=True)
    assert cli("list") == 0
    lines = cli.out.getvalue().splitlines()
    assert lines[0].split() == ["NAME", "PAUSED", "RUNNING/LIMIT", "RATE", "WAITING"]
    assert lines[1].split() == ["emails", "no", "3/5", "20/second", "12"]
    assert lines[2].split() == ["reports", "yes", "0/-", "-", "0"]
    assert cli("list", "--json") == 0
    assert [q["name"] for q in json.loads(cli.out.getvalue())] == ["emails", "reports"]


def test_jobs_queues_show_pause_resume_and_delete_by_name(cli: Cli) -> None:
    row = cli.fake.add("emails", concurrencyKey={"field": "customerId", "limit": 2})
    assert cli("show", "emails") == 0
    assert "state             active\n" in cli.out.getvalue()
    assert "concurrency key   2 running per payload.customerId\n" in cli.out.getvalue()
    assert cli("pause", "emails") == 0 and cli.out.getvalue() == "emails: paused\n"
    assert cli("show", row["id"]) == 0  # an id works as well
    paused_at = output.when(datetime.fromisoformat(CREATED))  # the fake's pausedAt
    assert f"state             paused since {paused_at} by {EMAIL}\n" in cli.out.getvalue()
    assert cli("resume", "emails", "--json") == 0
    assert json.loads(cli.out.getvalue())["paused"] is False
    assert cli("delete", "emails") == 0 and cli.out.getvalue() == "emails: deleted\n"
    assert cli.fake.routes()[-1] == ("DELETE", f"/api/queues/{row['id']}")
    assert cli.fake.rows == {}


def test_jobs_queues_exit_codes(cli: Cli) -> None:
    cli.fake.add("busy", running=2)
    assert cli("show", "nope") == commands.NOT_FOUND
    assert "no queue named 'nope'" in cli.err.getvalue()
    assert cli("delete", "nope", "--json") == commands.NOT_FOUND
    assert json.loads(cli.err.getvalue())["error"] == "not_found"
    sent = len(cli.fake.sent)
    assert cli("delete", "busy") == commands.UNAVAILABLE
    assert "409 conflict" in cli.err.getvalue()
    assert [m for m, _ in cli.fake.routes()[sent:]] == ["GET", "DELETE"]
    cli.fake.refuse = 403
    assert cli("set", "emails", "--max-concurrency", "1") == commands.AUTH


def test_queue_rows_show_running_of_the_limit() -> None:
    unlimited = Queue.from_json(VIEW | {"maxConcurrency": None, "rateLimit": None, "paused": False})
    assert output.queue_rows([Queue.from_json(VIEW), unlimited]) == [
        ["emails", "yes", "4/5", RateLimit(20, "second"), 7],
        ["emails", "no", "4/-", None, 7],
    ]
