"""The Python client SDK and the ``jobs`` CLI (clients/python) against the real stack: jobs
submitted, waited for (live events) and read back with both clients, listings paged, retry,
cancel, schedules, dead letters, the API's errors as typed exceptions, session renewal with
single-use refresh tokens, the CLI as a subprocess (``--json`` parsed, exit codes), and a
submission whose answer is lost on a cut connection: retried with the same Idempotency-Key,
it makes one job, not two."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from jobs_client import (
    AsyncJobsClient,
    AuthError,
    Conflict,
    Forbidden,
    JobsClient,
    JobSpec,
    NotFound,
    Tokens,
    ValidationError,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

# docs/worker.md, simulate: no failure, no sleep.
SUCCEED = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}
DIE_AT_ONCE = {"immediateFailureRate": 1, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}
USER = ("user@test.com", "user123")
JOBS_CLI = Path(sys.executable).parent / "jobs"


async def new_user(gateway_url: str) -> tuple[str, str]:
    """A user of this test's own: what it owns is exactly what the test made."""
    email, password = f"sdk-{uuid.uuid4().hex[:10]}@example.com", "a-long-password"
    async with httpx.AsyncClient(base_url=gateway_url, timeout=10) as http:
        registered = await http.post("/auth/register", json={"email": email, "password": password})
    assert registered.status_code == 202, registered.text
    return email, password


async def until(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll an async check until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


# --- the sync and async clients -------------------------------------------------------------


def test_sync_client_submits_waits_and_reads_a_job_and_its_logs(gateway_url: str) -> None:
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        submitted = jobs.submit("simulate", SUCCEED, priority=3, max_attempts=2)
        assert submitted.status == "accepted" and len(submitted.idempotency_key) == 36
        assert not submitted.replayed
        # The same call again with its key: the same job, and said to be a replay (the
        # gateway forwards Idempotent-Replayed).
        again = jobs.submit(
            "simulate",
            SUCCEED,
            priority=3,
            max_attempts=2,
            idempotency_key=submitted.idempotency_key,
        )
        assert (again.job_id, again.replayed) == (submitted.job_id, True)

        job = jobs.wait(submitted.job_id, timeout=30)
        assert job.status == "succeeded" and job.succeeded and job.finished
        assert job.detailed and job.result == {"durationSeconds": 0.0}
        assert (job.priority, job.max_attempts) == (3, 2)
        assert job.payload is not None and SUCCEED.items() <= job.payload.items()
        assert [a.status for a in job.attempts] == ["succeeded"]

        again = jobs.get(submitted.job_id)
        assert again.id == job.id and again.finished_at == job.finished_at

        lines = [line.message for line in jobs.logs(submitted.job_id)]
        assert any("succeeded" in message for message in lines), lines
        followed = [line.message for line in jobs.logs(submitted.job_id, follow=True)]
        assert followed == lines  # a finished job: follow reads what is there and stops


async def test_async_client_submits_a_batch_waits_for_all_and_pages_the_listing(
    gateway_url: str,
) -> None:
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        batch = await jobs.submit_batch(
            [JobSpec(type="simulate", payload=SUCCEED, ref=f"j{i}") for i in range(4)]
            + [JobSpec(type="simulate", payload=SUCCEED, depends_on=["ref:j0", "ref:j1"])],
            name="sdk",
        )
        assert len(batch.job_ids) == 5
        seen: list[int] = []
        done = await jobs.wait(
            batch.job_ids, timeout=30, on_progress=lambda p: seen.append(p.finished)
        )
        assert [j.id for j in done] == batch.job_ids
        assert {j.status for j in done} == {"succeeded"}
        assert seen and seen[-1] == 5  # progress reported up to the end
        assert done[4].depends_on and set(done[4].depends_on) == set(batch.job_ids[:2])

        listed = [j.id async for j in jobs.list(batch_id=batch.batch_id, page_size=2)]
        assert sorted(listed) == sorted(batch.job_ids)
        pages = [p async for p in jobs.pages(batch_id=batch.batch_id, page_size=2)]
        assert [len(p.items) for p in pages] == [2, 2, 1]
        assert pages[0].total_items == 5 and pages[-1].last
        limited = [j async for j in jobs.list(type="simulate", status="succeeded", limit=3)]
        assert len(limited) == 3

        single = await jobs.submit("simulate", SUCCEED)
        job = await jobs.wait(single.job_id, timeout=30, live=False)  # polling alone
        assert job.succeeded
        lines = [line async for line in jobs.logs(single.job_id, follow=True)]
        assert lines and all(line.attempt == 1 for line in lines)


async def test_retry_cancel_and_dead_letters(gateway_url: str) -> None:
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        doomed = [await jobs.submit("simulate", DIE_AT_ONCE, max_attempts=1) for _ in range(3)]
        later = await jobs.submit("simulate", SUCCEED, delay=300)
        dead = await jobs.wait([s.job_id for s in doomed], timeout=30)
        assert {j.status for j in dead} == {"dead"}

        letters = {d.job_id: d async for d in jobs.list_dead_letters(job_type="simulate")}
        assert {j.id for j in dead} <= set(letters)
        first, second, third = (letters[j.id] for j in dead)
        assert (
            first.job_status == "dead"
            and first.payload_snapshot["payload"]["immediateFailureRate"] == 1
        )

        # retry: the same payload dies again, at attempt 2
        assert (await jobs.retry(dead[0].id)).status == "retry_requested"

        async def died_again() -> bool:
            job = await jobs.get(dead[0].id)
            return job.status == "dead" and job.attempt == 2

        await until("the retried job to die again", died_again)

        # requeue with an edited payload: it succeeds this time
        requeued = await jobs.requeue_dead_letter(second.id, payload=SUCCEED, reason="fixed")
        assert (requeued.job_id, requeued.status) == (dead[1].id, "requeue_requested")

        async def succeeded() -> bool:
            return (await jobs.get(dead[1].id)).status == "succeeded"

        await until("the requeued job to succeed", succeeded)

        discarded = await jobs.discard_dead_letter(third.id, reason="not needed")
        assert (discarded.resolution, discarded.resolved_at is not None) == ("discarded", True)
        resolved = [d.id async for d in jobs.list_dead_letters(status="resolved")]
        assert third.id in resolved

        cancelled = await jobs.cancel(later.job_id, reason="changed my mind")
        assert cancelled.status in {"cancelled", "cancel_requested"}
        assert (await jobs.wait(later.job_id, timeout=30)).status == "cancelled"
        with pytest.raises(Conflict) as refused:
            await jobs.cancel(later.job_id)
        assert refused.value.status == 409 and refused.value.code == "conflict"
        with pytest.raises(Conflict):
            await jobs.retry(later.job_id)  # only a dead job


def test_a_schedule_is_created_paused_resumed_and_deleted(gateway_url: str) -> None:
    name = f"sdk-{uuid.uuid4().hex[:8]}"
    with JobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        schedule = jobs.create_schedule(
            name, "0 3 * * *", type="simulate", payload=SUCCEED, timezone="Europe/Berlin"
        )
        assert (schedule.paused, schedule.timezone) == (False, "Europe/Berlin")
        assert schedule.next_fire_at is not None and schedule.job_template["type"] == "simulate"
        assert schedule.id in {s.id for s in jobs.list_schedules(page_size=1)}

        paused = jobs.pause_schedule(schedule.id)
        assert paused.paused and paused.next_fire_at is None
        assert jobs.pause_schedule(schedule.id).paused  # idempotent
        assert not jobs.resume_schedule(schedule.id).paused

        with pytest.raises(Conflict):
            jobs.create_schedule(name, "0 3 * * *", type="simulate", payload=SUCCEED)
        jobs.delete_schedule(schedule.id)
        with pytest.raises(NotFound):
            jobs.get_schedule(schedule.id)


async def test_api_errors_are_typed_and_carry_the_envelope(gateway_url: str) -> None:
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        with pytest.raises(ValidationError) as invalid:
            await jobs.submit("simulate", {"minSeconds": -1, "failureRate": 2})
        assert invalid.value.status == 422 and invalid.value.code == "validation_error"
        assert {"payload.minSeconds", "payload.failureRate"} <= set(invalid.value.fields)
        assert invalid.value.request_id

        with pytest.raises(ValidationError) as in_batch:
            await jobs.submit_batch(
                [
                    JobSpec(type="simulate", payload=SUCCEED),
                    {"type": "simulate", "priority": 9, "payload": {}},
                ]
            )
        assert "jobs.1.priority" in in_batch.value.fields

        with pytest.raises(NotFound) as missing:
            await jobs.get(str(uuid.uuid4()))
        assert (missing.value.status, missing.value.code) == (404, "not_found")
        with pytest.raises(NotFound):
            await jobs.wait(str(uuid.uuid4()), timeout=5)  # never submitted: not waited for
        with pytest.raises(ValidationError):
            await jobs.get("not-a-uuid")

    with pytest.raises(AuthError) as refused:
        async with AsyncJobsClient(gateway_url, email=USER[0], password="wrong") as stranger:
            await stranger.get(str(uuid.uuid4()))
    assert refused.value.status == 401
    with JobsClient(gateway_url, token="not.a.token") as fixed, pytest.raises(AuthError):
        next(fixed.list())


def test_sessions_refresh_before_expiry_and_on_401_with_single_use_tokens(
    gateway_url: str,
) -> None:
    with JobsClient(gateway_url) as login:
        first = login.login(*USER)
    assert first.refresh_token and first.email == USER[0] and first.role == "user"

    # An access token about to expire is refreshed before the call.
    expiring = Tokens(
        access_token=first.access_token,
        refresh_token=first.refresh_token,
        expires_at=time.time() + 5,
    )
    with JobsClient(gateway_url, tokens=expiring) as jobs:
        next(jobs.list(limit=1), None)
        renewed = jobs.tokens
    assert renewed is not None and renewed.refresh_token not in (None, first.refresh_token)

    # A refused access token is refreshed once and the call sent again.
    broken = Tokens(access_token="x.y.z", refresh_token=renewed.refresh_token, expires_at=None)
    with JobsClient(gateway_url, tokens=broken) as jobs:
        next(jobs.list(limit=1), None)
        assert jobs.tokens is not None and jobs.tokens.access_token != "x.y.z"

    # The used refresh token is spent: presenting it again revokes the session.
    stale = Tokens(access_token="x.y.z", refresh_token=first.refresh_token, expires_at=None)
    with JobsClient(gateway_url, tokens=stale) as jobs, pytest.raises(AuthError):
        next(jobs.list(limit=1), None)


# --- the CLI ------------------------------------------------------------------------------


@dataclass
class Cli:
    url: str
    config: Path
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("JOBS_TOKEN", "JOBS_URL")}
        env |= {"JOBS_URL": self.url, "XDG_CONFIG_HOME": str(self.config)} | self.env
        return subprocess.run(
            [str(JOBS_CLI), *argv],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
            start_new_session=True,  # no controlling terminal: getpass reads stdin
        )

    def json(self, *argv: str, code: int = 0) -> Any:
        done = self(*argv)
        assert done.returncode == code, (argv, done.returncode, done.stdout, done.stderr)
        return json.loads(done.stdout)


async def test_the_cli_logs_in_submits_waits_and_reports_with_exit_codes(
    gateway_url: str, tmp_path: Path
) -> None:
    cli = Cli(gateway_url, tmp_path / "config")

    async def run(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(cli, *argv, stdin=stdin)

    async def run_json(*argv: str, code: int = 0) -> Any:
        return await asyncio.to_thread(cli.json, *argv, code=code)

    assert (await run("list")).returncode == 4  # no session yet

    # getpass reads the terminal; the CLI runs without one, so it prompts on stdin
    logged_in = await run("login", "--email", USER[0], stdin=USER[1] + "\n")
    assert logged_in.returncode == 0, logged_in.stderr
    session = tmp_path / "config" / "jobs" / "session.json"
    assert stat.S_IMODE(session.stat().st_mode) == 0o600
    assert stat.S_IMODE(session.parent.stat().st_mode) == 0o700
    stored = json.loads(session.read_text())
    assert stored["url"] == gateway_url and stored["refreshToken"] and USER[1] not in str(stored)

    # A session about to expire is refreshed by the next command, which saves the new pair.
    session.write_text(json.dumps(stored | {"expiresAt": time.time()}))
    assert (await run("list", "--limit", "1")).returncode == 0
    renewed = json.loads(session.read_text())
    assert renewed["refreshToken"] != stored["refreshToken"]
    assert renewed["expiresAt"] > time.time() + 600
    types = {row["type"]: row for row in await run_json("types", "--json")}
    assert types["simulate"]["builtin"] and types["simulate"]["liveWorkers"] >= 1
    assert stat.S_IMODE(session.stat().st_mode) == 0o600

    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(SUCCEED))
    half_second = json.dumps(SUCCEED | {"minSeconds": 0.5, "maxSeconds": 0.5})
    # Independent commands run side by side (each CLI start costs most of a second).
    done, dead, queued, created, missing, invalid = await asyncio.gather(
        run_json("submit", "simulate", "--payload", f"@{payload}", "--wait", "--json"),
        run_json(*"--json submit simulate --max-attempts 1 --wait --payload".split(),
                 json.dumps(DIE_AT_ONCE), code=1),
        run_json("submit", "simulate", "--payload", half_second, "--json"),
        run_json(*f"schedules create cli-{uuid.uuid4().hex[:6]} --type simulate --json".split(),
                 "--cron", "0 4 * * *", "--payload", json.dumps(SUCCEED)),
        run("get", str(uuid.uuid4()), "--json"),
        run("submit", "simulate", "--payload", '{"minSeconds":-1}'),
    )  # fmt: skip
    assert done["status"] == "succeeded" and done["result"] == {"durationSeconds": 0.0}
    assert dead["status"] == "dead"
    assert missing.returncode == 3 and json.loads(missing.stderr)["error"] == "not_found"
    assert invalid.returncode == 2 and "payload.minSeconds" in invalid.stderr

    waited, got, human, listed, logs, letters, conflict = await asyncio.gather(
        run_json("wait", queued["jobId"], done["jobId"], "--json", "--timeout", "30"),
        run_json("get", done["jobId"], "--json"),
        run("get", done["jobId"]),
        run_json("list", "--json", "--limit", "2", "--type", "simulate"),
        run("logs", done["jobId"], "--json"),
        run_json("dlq", "list", "--json"),
        run("retry", done["jobId"]),
    )
    assert [j["jobId"] for j in waited] == [queued["jobId"], done["jobId"]]
    assert {j["status"] for j in waited} == {"succeeded"}
    assert got["jobId"] == done["jobId"] and got["attempts"]
    assert "status       succeeded" in human.stdout and "result" in human.stdout
    assert len(listed) == 2 and all(j["type"] == "simulate" for j in listed)
    assert logs.returncode == 0
    assert any("succeeded" in json.loads(line)["message"] for line in logs.stdout.splitlines())
    assert dead["jobId"] in {d["jobId"] for d in letters}
    assert conflict.returncode == 5 and "409" in conflict.stderr  # only a dead job is retried
    assert created["jobTemplate"]["type"] == "simulate" and created["paused"] is False

    assert (await run("logout")).returncode == 0 and not session.exists()


async def test_the_cli_tails_live_status_changes(gateway_url: str) -> None:
    async with AsyncJobsClient(gateway_url, email=USER[0], password=USER[1]) as jobs:
        tokens = await jobs.login()
        env = {k: v for k, v in os.environ.items() if k != "JOBS_URL"}
        env |= {"JOBS_URL": gateway_url, "JOBS_TOKEN": tokens.access_token}
        tail = await asyncio.create_subprocess_exec(
            str(JOBS_CLI),
            "tail",
            "--json",
            "--count",
            "1",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            # Until the tail is connected, changes go by unseen: submit until one arrives.
            async with asyncio.timeout(30):
                while tail.returncode is None:
                    await jobs.submit("simulate", SUCCEED)
                    try:
                        await asyncio.wait_for(asyncio.shield(tail.wait()), 0.5)
                    except TimeoutError:
                        continue
        finally:
            if tail.returncode is None:
                tail.kill()
            out, err = await tail.communicate()
    assert tail.returncode == 0, err
    change = json.loads(out.decode().splitlines()[0])
    assert {"jobId", "fromStatus", "toStatus", "jobType"} <= set(change)


# --- a retried submission after a dropped connection --------------------------------------


@dataclass
class DroppingProxy:
    """A TCP proxy in front of the gateway. Its first connection's request is forwarded and
    answered by the gateway, and then the client's connection is closed without that answer
    (the client cannot know whether the job was made). Later connections are piped through.
    Every connection's first request head is kept."""

    upstream: tuple[str, int]
    heads: list[dict[str, str]] = field(default_factory=list)
    dropped_answer: bytes = b""
    port: int = 0

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str]]:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {"request-line": lines[0]}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return head + body, headers

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        first = not self.heads
        try:
            request, headers = await self._read_request(client_r)
        except (asyncio.IncompleteReadError, ConnectionError):
            client_w.close()
            return
        self.heads.append(headers)
        gateway_r, gateway_w = await asyncio.open_connection(*self.upstream)
        gateway_w.write(request)
        await gateway_w.drain()
        if first:
            head = await gateway_r.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            self.dropped_answer = await gateway_r.readexactly(length)
            gateway_w.close()
            client_w.transport.abort()  # cut: no answer, no orderly close
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while chunk := await source.read(65536):
                    sink.write(chunk)
                    await sink.drain()
            except ConnectionError:
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(client_r, gateway_w), pipe(gateway_r, client_w))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield f"http://127.0.0.1:{self.port}"


async def test_a_submission_retried_after_a_dropped_connection_makes_one_job(
    gateway_url: str,
) -> None:
    email, password = await new_user(gateway_url)
    async with AsyncJobsClient(gateway_url, email=email, password=password) as direct:
        tokens = await direct.login()
        gateway = urlsplit(gateway_url)
        proxy = DroppingProxy((gateway.hostname or "127.0.0.1", gateway.port or 80))
        async with (
            proxy.running() as proxied_url,
            AsyncJobsClient(proxied_url, tokens=tokens) as through_proxy,
        ):
            submitted = await through_proxy.submit("simulate", SUCCEED)

        # The first request reached the gateway and made the job; its answer was cut.
        first_answer = json.loads(proxy.dropped_answer)
        assert len(proxy.heads) == 2, proxy.heads
        assert all(h["request-line"].startswith("POST /api/jobs ") for h in proxy.heads)
        keys = [h["idempotency-key"] for h in proxy.heads]
        assert keys == [submitted.idempotency_key] * 2
        assert submitted.job_id == first_answer["jobId"]  # the retry got the same job back

        job = await direct.wait(submitted.job_id, timeout=30)
        assert job.succeeded
        page = await direct.list_page(page_size=10)
        assert page.total_items == 1 and [j.id for j in page.items] == [submitted.job_id]


# --- a project's API key ---------------------------------------------------------------------


def test_a_project_api_key_submits_into_its_project_and_a_viewer_key_may_not(
    gateway_url: str,
) -> None:
    email, password = asyncio.run(new_user(gateway_url))
    with JobsClient(gateway_url, email=email, password=password) as owner:
        token = owner.login().access_token
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=gateway_url, timeout=10, headers=auth) as http:
        org = http.post("/api/organizations", json={"name": "Key Co"}).json()
        project = http.post("/api/projects", json={"orgId": org["id"], "name": "CI"}).json()
        keys = f"/api/projects/{project['id']}/api-keys"
        member = http.post(keys, json={"name": "ci", "role": "member"}).json()["key"]
        viewer = http.post(keys, json={"name": "watch", "role": "viewer"}).json()["key"]

    with JobsClient(gateway_url, api_key=member) as ci:
        submitted = ci.submit("simulate", SUCCEED)
    elsewhere = JobsClient(gateway_url, api_key=member, project=str(uuid.uuid4()))
    with elsewhere, pytest.raises(NotFound):  # a key acts in its own project only
        elsewhere.submit("simulate", SUCCEED)
    with JobsClient(gateway_url, email=email, password=password) as owner:
        job = owner.wait(submitted.job_id, timeout=30)
        assert job.succeeded and job.submitted_by == email
        detail = owner.get(submitted.job_id)
        assert detail.raw["projectId"] == project["id"]
    with JobsClient(gateway_url, api_key=viewer) as watcher, pytest.raises(Forbidden):
        watcher.submit("simulate", SUCCEED)

    # A project with an unfinished job is not deleted; once it has none, it is.
    with JobsClient(gateway_url, api_key=member) as ci:
        later = ci.submit("simulate", SUCCEED, delay=3600)
    with JobsClient(gateway_url, email=email, password=password) as owner:
        deadline = time.monotonic() + 30
        while True:  # recorded by the scheduler: it counts as unfinished from then on
            with contextlib.suppress(NotFound):
                if owner.get(later.job_id).status == "scheduled":
                    break
            assert time.monotonic() < deadline, "the delayed job was not recorded"
            time.sleep(0.1)
    with httpx.Client(base_url=gateway_url, timeout=10, headers=auth) as http:
        refused = http.delete(f"/api/projects/{project['id']}")
        assert refused.status_code == 409 and "1 unfinished job" in refused.json()["message"]
    with JobsClient(gateway_url, email=email, password=password) as owner:
        owner.cancel(later.job_id)
        owner.wait(later.job_id, timeout=30)
    with httpx.Client(base_url=gateway_url, timeout=10, headers=auth) as http:
        assert http.delete(f"/api/projects/{project['id']}").status_code == 204
