"""Run a handler in-process, for a team's unit tests (docs/sdk.md, "Testing a handler").

``run(handler, payload)`` (or ``await run_async(...)`` inside an event loop) runs one attempt
the way a worker does, without a broker or a job store: the payload validated against the
handler's model (``InvalidPayload``), ``RetryLater`` / ``FailPermanently`` and any other
exception classified as the worker classifies them, the result checked against its model,
the timeout and the soft timeout, and a cancel after ``cancel_after`` seconds. It answers a
:class:`HandlerRun`: the outcome, the result or the error, the progress reported and the job
log lines the handler wrote.

    from jobs_sdk.testing import run

    def test_reverse() -> None:
        outcome = run(reverse, {"text": "abc"})
        assert outcome.status == "succeeded" and outcome.result == {"reversed": "cba"}

``parents=`` gives a DAG child its parents' results (by ref, or by job id); what the handler
enqueues with ``ctx.submit`` is recorded, not run: ``HandlerRun.submitted``. Pass one
:class:`FollowUpRecorder` (and ``job_id``) to two runs to see that a retried attempt submits
nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from pydantic import BaseModel, ValidationError

from jobs_sdk.context import CancelSignal, HandlerSpec, JobContext, JobLogger
from jobs_sdk.declare import spec_of
from jobs_sdk.errors import AttemptError, classify
from jobs_sdk.follow_ups import FollowUp, SubmitRefused
from jobs_sdk.outcomes import (
    Outcome,
    OutcomeName,
    cancelled,
    invalid_payload,
    own_cancelled_error,
    succeeded,
    timed_out,
)
from jobs_sdk.parents import Parent, ParentResults

CANCEL_REASON = "cancelled by the test (cancel_after)"


@dataclass(frozen=True)
class SubmittedJob:
    """A follow-up a handler submitted, as the submission service would have recorded it."""

    job_id: uuid.UUID
    follow_up: FollowUp

    @property
    def job_type(self) -> str:
        return self.follow_up.job_type

    @property
    def payload(self) -> dict[str, Any]:
        return self.follow_up.payload


class FollowUpRecorder:
    """Records ``ctx.submit`` calls as the submission service would accept them: the same
    idempotency key answers the first job's id (with another payload: ``SubmitRefused``)."""

    def __init__(self) -> None:
        self.jobs: list[SubmittedJob] = []
        self._by_key: dict[str, SubmittedJob] = {}

    async def submit(self, follow_up: FollowUp) -> uuid.UUID:
        return self.submit_blocking(follow_up)

    def submit_blocking(self, follow_up: FollowUp) -> uuid.UUID:
        first = self._by_key.get(follow_up.key)
        if first is not None:
            if _request(first.follow_up) != _request(follow_up):
                raise SubmitRefused(
                    "Idempotency-Key was already used with a different request",
                    status=409,
                    error="conflict",
                )
            return first.job_id
        job = SubmittedJob(uuid.uuid4(), follow_up)
        self._by_key[follow_up.key] = job
        self.jobs.append(job)
        return job.job_id


@dataclass(frozen=True)
class HandlerRun:
    """One attempt's outcome, as the worker would report it."""

    status: OutcomeName
    result: dict[str, Any] | None
    error: AttemptError | None
    progress: list[tuple[float, str | None]] = field(default_factory=list)
    log_lines: list[str] = field(default_factory=list)
    # The follow-ups this attempt enqueued (ctx.submit), in order; a replayed one not again.
    submitted: list[SubmittedJob] = field(default_factory=list)

    @property
    def retry_after_seconds(self) -> float | None:
        """The delay a ``RetryLater`` asked for (None otherwise)."""
        return None if self.error is None else self.error.retry_after_seconds


class RunOptions(TypedDict, total=False):
    """The keyword arguments :func:`run` passes on to :func:`run_async`."""

    attempt: int
    resources: Mapping[str, Any] | None
    cancel_after: float | None
    timeout_seconds: float | None
    config: Any
    parents: Mapping[str | uuid.UUID, Mapping[str, Any] | BaseModel | None] | None
    follow_ups: FollowUpRecorder | None
    job_id: uuid.UUID | None


def run(
    handler: Any, payload: Mapping[str, Any] | BaseModel, **options: Unpack[RunOptions]
) -> HandlerRun:
    """:func:`run_async` in an event loop of its own (not from inside a running loop)."""
    return asyncio.run(run_async(handler, payload, **options))


async def run_async(
    handler: Any,
    payload: Mapping[str, Any] | BaseModel,
    *,
    attempt: int = 1,
    resources: Mapping[str, Any] | None = None,
    cancel_after: float | None = None,
    timeout_seconds: float | None = None,
    config: Any = None,
    parents: Mapping[str | uuid.UUID, Mapping[str, Any] | BaseModel | None] | None = None,
    follow_ups: FollowUpRecorder | None = None,
    job_id: uuid.UUID | None = None,
) -> HandlerRun:
    """Run one attempt of the ``@handler`` function ``handler`` with ``payload`` (a dict as
    submitted, or the payload model). ``resources`` are what ``ctx.resource(name)`` answers;
    ``cancel_after`` asks the attempt to stop after that many seconds, as a person's cancel
    does; ``timeout_seconds`` defaults to the handler's; ``config`` is what ``ctx.config``
    answers (default: the handler's ``config=`` model read from the environment).
    ``parents`` are the parents' results, each keyed by its batch ref or its job id;
    ``follow_ups`` records what ``ctx.submit`` enqueues (a new recorder by default);
    ``job_id`` is the running job's (a fresh one by default)."""
    spec = spec_of(handler)
    if spec is None:
        raise TypeError(f"{handler!r} is not a @handler function")
    progress: list[tuple[float, str | None]] = []
    lines: list[str] = []
    recorder = follow_ups if follow_ups is not None else FollowUpRecorder()
    before = len(recorder.jobs)
    timeout = spec.timeout_seconds if timeout_seconds is None else timeout_seconds
    try:
        model = spec.payload_model.model_validate(_wire(payload))
    except ValidationError as exc:
        return _run(invalid_payload(exc), progress, lines)
    ctx = JobContext(
        job_id=job_id or uuid.uuid4(),
        attempt=attempt,
        job_type=spec.job_type,
        worker_id="test-worker",
        trace_id=uuid.uuid4().hex if job_id is None else job_id.hex,  # one per job
        config=config if config is not None else _config_of(spec),
        log=JobLogger(
            logging.getLogger("jobs_sdk.job"),
            {"job_type": spec.job_type, "attempt": attempt},
            forward=lambda _level, line: lines.append(line),
        ),
        cancel_signal=CancelSignal(),
        progress_sink=lambda percent, message: progress.append((percent, message)),
        resources=dict(resources or {}),
        deadline=time.monotonic() + timeout,
        submitted_by="test@example.com",
        project_id=uuid.UUID(int=0),
        parents=_parents(parents or {}),
        submitter=recorder,
    )
    outcome = await _attempt(spec, ctx, model, timeout, cancel_after)
    return _run(outcome, progress, lines, recorder.jobs[before:])


def _parents(
    given: Mapping[str | uuid.UUID, Mapping[str, Any] | BaseModel | None],
) -> ParentResults:
    """Parents keyed by job id (a UUID or its text) or by ref (any other text)."""
    parents = []
    for key, result in given.items():
        job_id, ref = (key, None) if isinstance(key, uuid.UUID) else _id_or_ref(key)
        value = None if result is None else _wire(result)
        parents.append(Parent(job_id=job_id, ref=ref, result=value))
    return ParentResults(parents)


def _id_or_ref(key: str) -> tuple[uuid.UUID, str | None]:
    try:
        return uuid.UUID(key), None
    except ValueError:
        return uuid.uuid4(), key


async def _attempt(
    spec: HandlerSpec,
    ctx: JobContext,
    payload: BaseModel,
    timeout: float,
    cancel_after: float | None,
) -> Outcome:
    loop = asyncio.get_running_loop()
    task: asyncio.Future[Any] = (
        asyncio.ensure_future(spec.run(ctx, payload))
        if spec.is_async
        else asyncio.ensure_future(asyncio.to_thread(spec.run, ctx, payload))
    )
    asked: list[bool] = []

    def cancel() -> None:
        asked.append(True)
        ctx.cancel_signal.set()
        task.cancel()

    timers = [
        loop.call_later(delay, action)
        for delay, action in (
            (cancel_after, cancel),
            (spec.soft_timeout_seconds, ctx.cancel_signal.set),
        )
        if delay is not None
    ]
    try:
        async with asyncio.timeout(timeout):
            value = await asyncio.shield(task)
    except asyncio.CancelledError:
        if asked:
            return cancelled(CANCEL_REASON)
        if task.done() and task.cancelled():
            return own_cancelled_error()
        raise
    except TimeoutError:
        ctx.cancel_signal.set()  # a sync handler's thread is told to stop
        task.cancel()
        return timed_out(timeout)
    except Exception as exc:
        return cancelled(CANCEL_REASON) if asked else ("failed", None, classify(exc))
    finally:
        for timer in timers:
            timer.cancel()
    return succeeded(spec, value)


def _request(follow_up: FollowUp) -> tuple[Any, ...]:
    """What the submission service compares under one Idempotency-Key (not the trace id)."""
    f = follow_up
    return (f.job_type, f.payload, f.depends_on, f.delay_seconds, f.priority, f.queue)


def _config_of(spec: HandlerSpec) -> Any:
    return spec.config_model.from_env() if spec.config_model is not None else None


def _wire(payload: Mapping[str, Any] | BaseModel) -> Any:
    """The payload as it travels: a model as its JSON, by alias."""
    if isinstance(payload, BaseModel):
        return payload.model_dump(mode="json", by_alias=True)
    return dict(payload)


def _run(
    outcome: Outcome,
    progress: list[tuple[float, str | None]],
    lines: list[str],
    submitted: list[SubmittedJob] | None = None,
) -> HandlerRun:
    status, result, error = outcome
    return HandlerRun(status, result, error, progress, lines, submitted or [])
