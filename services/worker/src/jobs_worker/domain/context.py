"""What a handler receives: the job context, and the shape of a registered handler."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from jobs_worker.domain.errors import describe

if TYPE_CHECKING:
    from jobs_worker.settings import Settings

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
    """What a handler is given with its payload (``jobs_worker.sdk`` re-exports it)."""

    job_id: uuid.UUID
    attempt: int
    job_type: str
    worker_id: str
    trace_id: str
    settings: Settings  # the worker's own settings (the built-in handlers read theirs here)
    log: JobLogger  # lines at WORKER_JOB_LOG_LEVEL and above reach the job's logs
    cancel_signal: CancelSignal = field(default_factory=CancelSignal)
    progress_sink: ProgressSink | None = None
    resources: Mapping[str, Any] = field(default_factory=dict)
    deadline: float | None = None  # time.monotonic() at the attempt's (hard) timeout

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
    """One job type as a worker serves it (``jobs_worker.sdk.handler`` builds it)."""

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


Registry = dict[str, HandlerSpec]
