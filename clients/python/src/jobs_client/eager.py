"""Run submitted jobs in-process and at once, for a team's unit tests: Celery's
``task_always_eager``, with the platform's rules.

    from jobs_client.eager import EagerJobsClient

    def test_checkout_queues_an_invoice() -> None:
        jobs = EagerJobsClient([invoice])          # the @handler functions (jobs_sdk)
        handle = checkout(jobs, cart)              # code that calls jobs.submit(...)
        assert handle.result().total_cents == 300

:class:`EagerJobsClient` is a :class:`~jobs_client.JobsClient` whose requests never leave the
process: ``submit`` (by type, task or chain/group), ``submit_batch``, ``get``, ``wait`` and
the handles' ``result()`` behave as against the platform (an unknown type or an invalid
payload is its 422), while each job runs through ``jobs_sdk.testing`` when it is submitted:
``RetryLater`` and failures retried at once up to its ``maxAttempts``, ``FailPermanently``
dead at once, a child of a batch run after its parents with their results
(``ctx.parent_results``; dead, ``dependency_failed``, when one failed), and the jobs a handler
enqueues with ``ctx.submit`` run after it, once per idempotency key. Delays and ``runAt`` are
not waited for; priorities and queues do not matter. It needs the handler SDK
(``pip install jobs-sdk``), as a team's tests have it.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection as AsyncConnection
from websockets.sync.client import ClientConnection as SyncConnection

from jobs_client.async_client import AsyncJobsClient
from jobs_client.sync_client import JobsClient
from jobs_sdk import HandlerSpec, spec_of
from jobs_sdk.follow_ups import FollowUp, SubmitRefused
from jobs_sdk.testing import FollowUpRecorder, HandlerRun, SubmittedJob, run, run_async

URL = "http://eager.invalid"
OWNER = "eager"

# Drives one job's attempts: yields the attempt number to run, is sent its outcome.
Attempts = Generator[int, HandlerRun, None]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _error(status: int, code: str, message: str, field_name: str | None = None) -> httpx.Response:
    details = [{"field": field_name, "message": message}] if field_name else []
    return httpx.Response(status, json={"error": code, "message": message, "details": details})


class Refused(Exception):
    """A request the platform would refuse (answered 422, nothing recorded)."""

    def __init__(self, message: str, field_name: str) -> None:
        super().__init__(message)
        self.field_name = field_name


@dataclass
class EagerJob:
    """A job as ``GET /api/jobs/{id}`` answers it, built up as it runs."""

    spec: HandlerSpec
    body: dict[str, Any]
    parents: list[str]
    batch_id: str | None = None
    submitted_by: str = OWNER
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    created_at: str = field(default_factory=_now)
    status: str = "queued"
    attempts: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None
    last_error: str | None = None
    last_error_class: str | None = None
    dead_reason: str | None = None

    @property
    def max_attempts(self) -> int:
        return int(self.body.get("maxAttempts") or self.spec.max_attempts)

    def end(self, status: str, reason: str | None = None) -> None:
        self.timeline.append({"toStatus": status, "reason": reason, "at": _now()})
        self.status = status
        if status == "dead":
            self.dead_reason = reason

    def as_json(self) -> dict[str, Any]:
        return {
            "jobId": self.id,
            "type": self.spec.job_type,
            "priority": int(self.body.get("priority") or 2),
            "status": self.status,
            "attempt": len(self.attempts),
            "maxAttempts": self.max_attempts,
            "submittedBy": self.submitted_by,
            "createdAt": self.created_at,
            "updatedAt": self.timeline[-1]["at"] if self.timeline else self.created_at,
            "startedAt": self.attempts[0]["startedAt"] if self.attempts else None,
            "finishedAt": self.attempts[-1]["finishedAt"] if self.attempts else None,
            "lastError": self.last_error,
            "lastErrorClass": self.last_error_class,
            "batchId": self.batch_id,
            "dependsOn": self.parents,
            "payload": self.body.get("payload"),
            "result": self.result,
            "attempts": self.attempts,
            "timeline": self.timeline,
            "deadLetter": {"reason": self.dead_reason} if self.dead_reason else None,
        }


class EagerPlatform:
    """The part of the public API a client's submit and wait use, answered in-process."""

    def __init__(
        self,
        handlers: Iterable[Callable[..., Any]],
        *,
        resources: Mapping[str, Any] | None = None,
        configs: Mapping[str, Any] | None = None,
    ) -> None:
        self.specs: dict[str, HandlerSpec] = {}
        self.functions: dict[str, Callable[..., Any]] = {}
        for function in handlers:
            spec = spec_of(function)
            if spec is None:
                raise TypeError(f"{function!r} is not a @handler function (jobs_sdk.handler)")
            self.specs[spec.job_type] = spec
            self.functions[spec.job_type] = function
        self.resources = dict(resources or {})
        self.configs = dict(configs or {})  # by job type: what ctx.config answers
        self.jobs: dict[str, EagerJob] = {}
        self.keys: dict[str, httpx.Response] = {}  # Idempotency-Key -> the first answer
        self.follow_ups = EagerFollowUps(self)

    # --- requests ----------------------------------------------------------------------

    def accept(self, request: httpx.Request) -> tuple[httpx.Response, list[EagerJob]]:
        """The answer to ``request`` and the jobs it accepted, to run now in order."""
        path, method = request.url.path, request.method
        key = request.headers.get("idempotency-key")
        if method == "POST" and key is not None and key in self.keys:
            first = self.keys[key]
            return httpx.Response(
                first.status_code, json=first.json(), headers={"Idempotent-Replayed": "true"}
            ), []
        if method == "POST" and path in ("/api/jobs", "/api/batches"):
            try:
                answer, accepted = self._submit(path, json.loads(request.content or b"{}"))
            except Refused as exc:
                return _error(422, "validation_error", str(exc), exc.field_name), []
            if key is not None:
                self.keys[key] = answer
            return answer, accepted
        if method == "GET" and path.startswith("/api/jobs/"):
            job = self.jobs.get(path.removeprefix("/api/jobs/"))
            if job is None:
                return _error(404, "not_found", "no such job"), []
            return httpx.Response(200, json=job.as_json()), []
        return _error(404, "not_found", f"{method} {path} is not served in eager mode"), []

    def job(self, body: Mapping[str, Any]) -> EagerJob:
        """A job of its own (not a batch member), checked as ``POST /api/jobs`` checks it."""
        return self._job(body, refs={}, batch_id=None, where="")

    def _submit(self, path: str, body: Mapping[str, Any]) -> tuple[httpx.Response, list[EagerJob]]:
        if path == "/api/jobs":
            job = self.job(body)
            self.jobs[job.id] = job
            return httpx.Response(202, json={"jobId": job.id, "status": "accepted"}), [job]
        batch_id = str(uuid.uuid4())
        refs: dict[str, str] = {}
        accepted = []
        for index, item in enumerate(body.get("jobs") or []):
            job = self._job(item, refs=refs, batch_id=batch_id, where=f"jobs[{index}].")
            if item.get("ref"):
                refs[str(item["ref"])] = job.id
            accepted.append(job)
        self.jobs.update((job.id, job) for job in accepted)
        answer = {"batchId": batch_id, "jobIds": [job.id for job in accepted], "status": "accepted"}
        return httpx.Response(202, json=answer), accepted

    def _job(
        self, body: Mapping[str, Any], *, refs: Mapping[str, str], batch_id: str | None, where: str
    ) -> EagerJob:
        job_type = str(body.get("type"))
        spec = self.specs.get(job_type)
        if spec is None:
            raise Refused(
                f"unknown job type {job_type!r}: this eager client serves "
                f"{', '.join(sorted(self.specs)) or 'no type'}",
                f"{where}type",
            )
        try:
            spec.payload_model.model_validate(body.get("payload"))
        except ValidationError as exc:
            first = exc.errors()[0]
            path = ".".join(str(part) for part in ("payload", *first["loc"]))
            raise Refused(f"{path}: {first['msg']}", f"{where}{path}") from exc
        parents = []
        for parent in body.get("dependsOn") or []:
            name = str(parent)
            resolved = refs.get(name.removeprefix("ref:")) if name.startswith("ref:") else name
            if resolved is None or (resolved not in self.jobs and resolved not in refs.values()):
                raise Refused(f"dependsOn names no earlier job: {name}", f"{where}dependsOn")
            parents.append(resolved)
        return EagerJob(spec, dict(body), parents, batch_id)

    # --- running -----------------------------------------------------------------------

    def attempts(self, job: EagerJob) -> Attempts:
        """One job's attempts, as the platform decides them (retries at once, no backoff)."""
        if any(self.jobs[parent].status != "succeeded" for parent in job.parents):
            job.end("dead", "dependency_failed")
            return
        for number in itertools.count(1):
            started = _now()
            outcome = yield number
            error = outcome.error
            job.attempts.append(
                {
                    "attempt": number,
                    "status": outcome.status,
                    "workerId": "eager",
                    "startedAt": started,
                    "finishedAt": _now(),
                    "errorClass": error.error_class if error else None,
                    "error": error.message if error else None,
                }
            )
            if outcome.status == "succeeded":
                job.result = outcome.result
                job.end("succeeded")
                return
            if error is not None:
                job.last_error, job.last_error_class = error.message, error.error_class
            if outcome.status == "cancelled":
                job.end("cancelled", error.message if error else None)
                return
            if error is not None and error.kind == "permanent":
                job.end("dead", "permanent_error")
                return
            if number >= job.max_attempts:
                job.end("dead", "max_attempts")
                return

    def options(self, job: EagerJob, attempt: int) -> dict[str, Any]:
        return {
            "attempt": attempt,
            "resources": self.resources,
            "config": self.configs.get(job.spec.job_type),
            "parents": self.parent_results(job),
            "follow_ups": self.follow_ups,
            "job_id": uuid.UUID(job.id),
        }

    def parent_results(self, job: EagerJob) -> dict[str | uuid.UUID, Any]:
        """Each parent's result by its ref in the child's batch, else by its id."""
        found: dict[str | uuid.UUID, Any] = {}
        for parent_id in job.parents:
            parent = self.jobs[parent_id]
            ref = parent.body.get("ref") if parent.batch_id == job.batch_id else None
            found[str(ref) if ref else uuid.UUID(parent_id)] = parent.result
        return found

    def run_now(self, jobs: list[EagerJob]) -> None:
        for job in self.follow_ups.after(jobs):
            function = self.functions[job.spec.job_type]
            steps = self.attempts(job)
            try:
                attempt = next(steps)
                while True:
                    outcome = run(function, job.body["payload"], **self.options(job, attempt))
                    attempt = steps.send(outcome)
            except StopIteration:
                pass

    async def run_now_async(self, jobs: list[EagerJob]) -> None:
        for job in self.follow_ups.after(jobs):
            function = self.functions[job.spec.job_type]
            steps = self.attempts(job)
            try:
                attempt = next(steps)
                while True:
                    options = self.options(job, attempt)
                    outcome = await run_async(function, job.body["payload"], **options)
                    attempt = steps.send(outcome)
            except StopIteration:
                pass


class EagerFollowUps(FollowUpRecorder):
    """``ctx.submit`` in eager mode: the follow-up is recorded as a job of the same owner,
    answered by its idempotency key as the submission service answers it, and run after the
    job that enqueued it (:meth:`after`)."""

    def __init__(self, platform: EagerPlatform) -> None:
        super().__init__()
        self.platform = platform
        self.pending: list[EagerJob] = []
        self.by_key: dict[str, tuple[EagerJob, dict[str, Any]]] = {}

    async def submit(self, follow_up: FollowUp) -> uuid.UUID:
        return self.submit_blocking(follow_up)

    def submit_blocking(self, follow_up: FollowUp) -> uuid.UUID:
        body: dict[str, Any] = {"type": follow_up.job_type, "payload": follow_up.payload}
        if follow_up.depends_on:
            body["dependsOn"] = list(follow_up.depends_on)
        if follow_up.priority is not None:
            body["priority"] = follow_up.priority
        seen = self.by_key.get(follow_up.key)
        if seen is not None:
            if seen[1] != body:
                raise SubmitRefused(
                    "Idempotency-Key was already used with a different request",
                    status=409,
                    error="conflict",
                )
            return uuid.UUID(seen[0].id)
        try:
            job = self.platform.job(body)
        except Refused as exc:
            raise SubmitRefused(str(exc), status=422, error="validation_error") from exc
        job.submitted_by = follow_up.submitted_by or OWNER
        self.platform.jobs[job.id] = job
        self.by_key[follow_up.key] = (job, body)
        self.pending.append(job)
        self.jobs.append(SubmittedJob(uuid.UUID(job.id), follow_up))
        return uuid.UUID(job.id)

    def after(self, jobs: list[EagerJob]) -> Generator[EagerJob, None, None]:
        """``jobs`` in order, each followed by what it enqueued (and what those enqueued)."""
        for job in jobs:
            yield job
            while self.pending:
                yield self.pending.pop(0)


class EagerTransport(httpx.BaseTransport):
    def __init__(self, platform: EagerPlatform) -> None:
        self.platform = platform

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer, accepted = self.platform.accept(request)
        self.platform.run_now(accepted)
        return answer


class AsyncEagerTransport(httpx.AsyncBaseTransport):
    def __init__(self, platform: EagerPlatform) -> None:
        self.platform = platform

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        answer, accepted = self.platform.accept(request)
        await self.platform.run_now_async(accepted)
        return answer


class EagerJobsClient(JobsClient):
    """A :class:`~jobs_client.JobsClient` that runs what it submits at once, in-process,
    with ``handlers`` (``@handler`` functions); ``resources`` and ``configs`` (by job type)
    are what their ``ctx.resource(name)`` and ``ctx.config`` answer. ``platform.jobs`` holds
    every job submitted."""

    def __init__(
        self,
        handlers: Iterable[Callable[..., Any]],
        *,
        resources: Mapping[str, Any] | None = None,
        configs: Mapping[str, Any] | None = None,
    ) -> None:
        self.platform = EagerPlatform(handlers, resources=resources, configs=configs)
        super().__init__(URL, token="eager", transport=EagerTransport(self.platform))

    def _open_socket(self) -> SyncConnection | None:
        return None  # every job is finished when submit returns: nothing to listen for


class AsyncEagerJobsClient(AsyncJobsClient):
    """:class:`EagerJobsClient` for asyncio code (``await jobs.submit(...)``)."""

    def __init__(
        self,
        handlers: Iterable[Callable[..., Any]],
        *,
        resources: Mapping[str, Any] | None = None,
        configs: Mapping[str, Any] | None = None,
    ) -> None:
        self.platform = EagerPlatform(handlers, resources=resources, configs=configs)
        super().__init__(URL, token="eager", transport=AsyncEagerTransport(self.platform))

    async def _open_socket(self) -> AsyncConnection | None:
        return None  # every job is finished when submit returns: nothing to listen for
