"""Run a handler in-process, for a team's unit tests (docs/sdk.md, "Testing a handler").

``run(handler, payload)`` (or ``await run_async(...)`` inside an event loop) runs one attempt
the way a worker does, without a broker or a job store: the payload validated against the
handler's model (``InvalidPayload``), ``RetryLater`` / ``FailPermanently`` and any other
exception classified as the worker classifies them, the result checked against its model,
the timeout and the soft timeout, and a cancel after ``cancel_after`` seconds. It answers a
:class:`HandlerRun`: the outcome, the result or the error, the progress reported and the job
log lines the handler wrote.

    from jobs_worker.testing import run

    def test_reverse() -> None:
        outcome = run(reverse, {"text": "abc"})
        assert outcome.status == "succeeded" and outcome.result == {"reversed": "cba"}
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from jobs_common.contracts import JobError
from jobs_worker.domain.context import CancelSignal, HandlerSpec, JobContext, JobLogger
from jobs_worker.domain.errors import classify
from jobs_worker.domain.outcomes import (
    Outcome,
    OutcomeName,
    cancelled,
    invalid_payload,
    own_cancelled_error,
    succeeded,
    timed_out,
)
from jobs_worker.sdk import spec_of
from jobs_worker.settings import Settings

CANCEL_REASON = "cancelled by the test (cancel_after)"


@dataclass(frozen=True)
class HandlerRun:
    """One attempt's outcome, as the worker would report it."""

    status: OutcomeName
    result: dict[str, Any] | None
    error: JobError | None
    progress: list[tuple[float, str | None]] = field(default_factory=list)
    log_lines: list[str] = field(default_factory=list)

    @property
    def retry_after_seconds(self) -> float | None:
        """The delay a ``RetryLater`` asked for (None otherwise)."""
        return None if self.error is None else self.error.retry_after_seconds


def run(
    handler: Any,
    payload: Mapping[str, Any] | BaseModel,
    *,
    attempt: int = 1,
    resources: Mapping[str, Any] | None = None,
    cancel_after: float | None = None,
    timeout_seconds: float | None = None,
    settings: Settings | None = None,
) -> HandlerRun:
    """:func:`run_async` in an event loop of its own (not from inside a running loop)."""
    return asyncio.run(
        run_async(
            handler,
            payload,
            attempt=attempt,
            resources=resources,
            cancel_after=cancel_after,
            timeout_seconds=timeout_seconds,
            settings=settings,
        )
    )


async def run_async(
    handler: Any,
    payload: Mapping[str, Any] | BaseModel,
    *,
    attempt: int = 1,
    resources: Mapping[str, Any] | None = None,
    cancel_after: float | None = None,
    timeout_seconds: float | None = None,
    settings: Settings | None = None,
) -> HandlerRun:
    """Run one attempt of the ``@handler`` function ``handler`` with ``payload`` (a dict as
    submitted, or the payload model). ``resources`` are what ``ctx.resource(name)`` answers;
    ``cancel_after`` asks the attempt to stop after that many seconds, as a person's cancel
    does; ``timeout_seconds`` defaults to the handler's."""
    spec = spec_of(handler)
    if spec is None:
        raise TypeError(f"{handler!r} is not a @handler function")
    progress: list[tuple[float, str | None]] = []
    lines: list[str] = []
    timeout = spec.timeout_seconds if timeout_seconds is None else timeout_seconds
    try:
        model = spec.payload_model.model_validate(_wire(payload))
    except ValidationError as exc:
        return _run(invalid_payload(exc), progress, lines)
    ctx = JobContext(
        job_id=uuid.uuid4(),
        attempt=attempt,
        job_type=spec.job_type,
        worker_id="test-worker",
        trace_id=uuid.uuid4().hex,
        settings=settings or Settings(),
        log=JobLogger(
            logging.getLogger("jobs_worker.job"),
            {"job_type": spec.job_type, "attempt": attempt},
            forward=lambda _level, line: lines.append(line),
        ),
        cancel_signal=CancelSignal(),
        progress_sink=lambda percent, message: progress.append((percent, message)),
        resources=dict(resources or {}),
        deadline=time.monotonic() + timeout,
    )
    return _run(await _attempt(spec, ctx, model, timeout, cancel_after), progress, lines)


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


def _wire(payload: Mapping[str, Any] | BaseModel) -> Any:
    """The payload as it travels: a model as its JSON, by alias."""
    if isinstance(payload, BaseModel):
        return payload.model_dump(mode="json", by_alias=True)
    return dict(payload)


def _run(
    outcome: Outcome, progress: list[tuple[float, str | None]], lines: list[str]
) -> HandlerRun:
    status, result, error = outcome
    return HandlerRun(status, result, error, progress, lines)
