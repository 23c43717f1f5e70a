"""What a handler receives: the job context, and the shape of a registered handler."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from jobs_sdk.config import HandlerConfig
from jobs_sdk.errors import describe
from jobs_sdk.follow_ups import FollowUp, Submitter, SubmitUnavailable, follow_up_key
from jobs_sdk.parents import NO_PARENTS, ParentResults
from jobs_sdk.schedules import Cron

M = TypeVar("M", bound=BaseModel)
# The attribute @handler sets on the function it marks (jobs_sdk.declare).
HANDLER_MARK = "__jobs_handler__"

LogForward = Callable[[int, str], None]
"""Receives ``(levelno, rendered line)`` for every forwarded job log line; must be safe to
call from any thread (handlers log from ``asyncio.to_thread`` too)."""


def render_line(msg: object, args: tuple[object, ...], exc_info: object) -> str:
    """The line as the job's owner reads it: message and args rendered as a logging formatter
    would, and an exception as ``Class: message`` (paths stripped), never its traceback; the
    traceback goes to the worker's own log only (:meth:`JobLogger.log`)."""
    text = str(msg)
    if args:
        try:
            text = text % args
        except (TypeError, ValueError, KeyError):
            text = f"{text} {args!r}"
    exc: BaseException | None = None
    if isinstance(exc_info, BaseException):
        exc = exc_info
    elif isinstance(exc_info, tuple) and len(exc_info) == 3:
        exc = exc_info[1] if isinstance(exc_info[1], BaseException) else None
    elif exc_info:
        exc = sys.exc_info()[1]
    if exc is not None and (named := describe(exc)) not in text:  # not named twice
        text = f"{text}\n{named}"
    return text


class JobLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger that stamps ``job_id``, ``attempt``, ``job_type``, ``trace_id`` and
    ``worker_id`` on every line and merges the call site's own ``extra`` fields.

    With ``forward``, every line at ``forward_level`` or above is also handed to it (whatever
    the local log level): the worker ships them to ``jobs.logs``, where the job's owner reads
    them; so a forwarded line names an exception by class and message only, while the
    worker's own log record keeps ``exc_info`` and with it the traceback.

    Only lines at ``local_level`` or above reach the worker's own log: a handler's routine
    lines are on the job's page already, and writing each twice cost the worker a sixth of
    its time under load."""

    def __init__(
        self,
        logger: logging.Logger,
        extra: Mapping[str, object] | None = None,
        *,
        forward: LogForward | None = None,
        forward_level: int = logging.INFO,
        local_level: int = logging.NOTSET,
    ) -> None:
        super().__init__(logger, extra)
        self.forward = forward
        self.forward_level = forward_level
        self.local_level = local_level

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs["extra"] = {**(self.extra or {}), **(kwargs.get("extra") or {})}
        return msg, kwargs

    def log(
        self,
        level: int,
        msg: object,
        *args: object,
        exc_info: Any = None,
        stack_info: bool = False,
        stacklevel: int = 1,
        extra: Mapping[str, object] | None = None,
        **kwargs: object,
    ) -> None:
        if self.forward is not None and level >= self.forward_level:
            try:
                self.forward(level, render_line(msg, args, exc_info))
            except Exception:  # shipping a line must never break the handler
                self.logger.debug("job log line not forwarded", exc_info=True)
        if level < self.local_level:
            return
        super().log(
            level,
            msg,
            *args,
            exc_info=exc_info,
            stack_info=stack_info,
            stacklevel=stacklevel + 1,
            extra=extra,
            **kwargs,
        )


class CancelSignal:
    """Set when the attempt is asked to stop (a person's cancel, a lease judged lost). An
    async handler is also cancelled at its next ``await``; a sync one, running in a thread,
    can only stop by polling :attr:`JobContext.cancelled`."""

    def __init__(self) -> None:
        self._flag = threading.Event()  # read from handler threads
        self._event = asyncio.Event()

    def set(self) -> None:
        self._flag.set()
        self._event.set()

    def is_set(self) -> bool:
        return self._flag.is_set()

    async def wait(self) -> None:
        await self._event.wait()


ProgressSink = Callable[[float, str | None], None]


@dataclass(frozen=True)
class JobContext:
    """What a handler is given with its payload."""

    job_id: uuid.UUID
    attempt: int
    job_type: str
    worker_id: str
    trace_id: str
    log: JobLogger  # lines at WORKER_JOB_LOG_LEVEL and above reach the job's logs
    cancel_signal: CancelSignal = field(default_factory=CancelSignal)
    progress_sink: ProgressSink | None = None
    resources: Mapping[str, Any] = field(default_factory=dict)
    deadline: float | None = None  # time.monotonic() at the attempt's (hard) timeout
    # The handler's own configuration: an instance of the HandlerConfig model its @handler
    # names (``config=``), read from the environment once when the worker loads it.
    config: Any = None
    # Who the job runs for: ctx.submit enqueues follow-ups as this owner, in this project.
    submitted_by: str | None = None
    project_id: uuid.UUID | None = None
    # A DAG child's parents with their results (docs/sdk.md, "Parent results").
    parents: ParentResults = NO_PARENTS
    # What ctx.submit submits through (the worker's); None: submitting is not set up here.
    submitter: Submitter | None = None
    _calls: itertools.count[int] = field(default_factory=lambda: itertools.count(1), repr=False)

    @property
    def parent_results(self) -> ParentResults:
        """The parents' results by parent job id (empty for a job without parents)."""
        return self.parents

    @property
    def parent_results_by_ref(self) -> Mapping[str, dict[str, Any] | None]:
        """The results of the parents that are members of this job's batch with a ``ref``."""
        return self.parents.by_ref

    @overload
    def parent_result(self, key: str | uuid.UUID) -> dict[str, Any] | None: ...

    @overload
    def parent_result(self, key: str | uuid.UUID, model: type[M]) -> M: ...

    def parent_result(
        self, key: str | uuid.UUID, model: type[M] | None = None
    ) -> dict[str, Any] | M | None:
        """A parent's result, the parent named by its batch ``ref`` or its job id; parsed
        into ``model`` when given. KeyError: no such parent; ``ParentResultTooLarge``: the
        result was too large to carry."""
        value = self.parents.find(key).value()
        return value if model is None else model.model_validate(value)

    async def submit(
        self,
        task: Any,
        payload: Mapping[str, Any] | BaseModel,
        *,
        depends_on: Iterable[uuid.UUID | str] = (),
        delay: float | timedelta | None = None,
        priority: int | None = None,
        queue: str | None = None,
        key: str | None = None,
    ) -> uuid.UUID:
        """Enqueue a follow-up job as this job's owner, in its project, with its trace id;
        returns the new job's id. ``task``: a job type, or a ``@handler`` function.

        Idempotent per job: the n-th call of an attempt (or the call with ``key=``) submits
        the same follow-up whichever attempt makes it, so a retried attempt does not enqueue
        twice; give a ``key`` to calls whose order may vary (concurrent ones)."""
        follow_up = self._follow_up(task, payload, depends_on, delay, priority, queue, key)
        return await self._submitter().submit(follow_up)

    def submit_sync(
        self,
        task: Any,
        payload: Mapping[str, Any] | BaseModel,
        *,
        depends_on: Iterable[uuid.UUID | str] = (),
        delay: float | timedelta | None = None,
        priority: int | None = None,
        queue: str | None = None,
        key: str | None = None,
    ) -> uuid.UUID:
        """:meth:`submit` for sync (``def``) handlers, from their thread."""
        follow_up = self._follow_up(task, payload, depends_on, delay, priority, queue, key)
        return self._submitter().submit_blocking(follow_up)

    def _submitter(self) -> Submitter:
        if self.submitter is None:
            raise SubmitUnavailable(30, "this worker is not set up to submit jobs")
        return self.submitter

    def _follow_up(
        self,
        task: Any,
        payload: Mapping[str, Any] | BaseModel,
        depends_on: Iterable[uuid.UUID | str],
        delay: float | timedelta | None,
        priority: int | None,
        queue: str | None,
        key: str | None,
    ) -> FollowUp:
        order = next(self._calls)  # counted first: a refused call keeps its place
        spec = getattr(task, HANDLER_MARK, None)
        if isinstance(spec, HandlerSpec):
            job_type = spec.job_type
            if isinstance(payload, BaseModel) and not isinstance(payload, spec.payload_model):
                raise TypeError(
                    f"{job_type} takes a {spec.payload_model.__name__}, "
                    f"not a {type(payload).__name__}"
                )
        elif isinstance(task, str):
            job_type = task
        else:
            raise TypeError(f"submit takes a job type or a @handler function, not {task!r}")
        if isinstance(delay, timedelta):
            delay = delay.total_seconds()
        if delay is not None and delay < 0:
            raise ValueError(f"delay is 0 or more seconds, not {delay}")
        return FollowUp(
            job_type=job_type,
            payload=(
                payload.model_dump(mode="json", by_alias=True)
                if isinstance(payload, BaseModel)
                else dict(payload)
            ),
            key=follow_up_key(self.job_id, order, key),
            from_job=self.job_id,
            trace_id=self.trace_id,
            submitted_by=self.submitted_by,
            project_id=self.project_id,
            depends_on=tuple(str(parent) for parent in depends_on),
            delay_seconds=None if delay is None else round(delay),
            priority=priority,
            queue=queue,
        )

    def time_left(self) -> float | None:
        """Seconds until the attempt's timeout ends it (0 once past); None: no timeout."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def resource(self, name: str) -> Any:
        """A resource a handler module set up with ``@resource(name)``."""
        try:
            return self.resources[name]
        except KeyError:
            raise LookupError(f"no resource {name!r} on this worker") from None

    @property
    def cancelled(self) -> bool:
        """Whether the attempt was asked to stop (a cancel, its soft timeout, or its timeout,
        after which a sync handler's thread is left to finish alone): poll it in long loops
        of a sync handler."""
        return self.cancel_signal.is_set()

    async def wait_cancelled(self) -> None:
        """Returns once the attempt is asked to stop."""
        await self.cancel_signal.wait()

    async def progress(self, percent: float, message: str | None = None) -> None:
        """Report how far the attempt got (0-100), with an optional message: a job log line,
        and the latest value on the attempt."""
        self.report_progress(percent, message)

    def report_progress(self, percent: float, message: str | None = None) -> None:
        """:meth:`progress` for sync handlers (safe from their thread)."""
        if not 0 <= percent <= 100:
            raise ValueError(f"progress is a percentage from 0 to 100, not {percent}")
        if message:
            self.log.info("progress %g%%: %s", percent, message, extra={"action": "progress"})
        else:
            self.log.info("progress %g%%", percent, extra={"action": "progress"})
        if self.progress_sink is not None:
            self.progress_sink(percent, message)


AsyncHandler = Callable[[JobContext, Any], Coroutine[Any, Any, Any]]
SyncHandler = Callable[[JobContext, Any], Any]


@dataclass(frozen=True)
class HandlerSpec:
    """One job type as a worker serves it (``jobs_sdk.handler`` builds it)."""

    job_type: str
    payload_model: type[BaseModel]
    run: AsyncHandler | SyncHandler
    is_async: bool
    timeout_seconds: int = 300
    max_attempts: int = 3
    queue: str = "default"
    result_model: type[BaseModel] | None = None
    slots: int = 1
    module: str = ""  # where it was defined, for the messages that name it
    # Seconds into the attempt when the handler is asked to stop (ctx.cancelled), the hard
    # timeout still to come; None: only the hard timeout.
    soft_timeout_seconds: int | None = None
    schedules: tuple[Cron, ...] = ()  # declared in code, reconciled when a worker starts
    config_model: type[HandlerConfig] | None = None  # its own settings, from the environment


Registry = dict[str, HandlerSpec]
