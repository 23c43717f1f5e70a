"""What a handler receives: the job context, and the shape of a registered handler."""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Callable, Coroutine, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jobs_common.payloads import Payload
from jobs_worker.domain.errors import describe

if TYPE_CHECKING:
    from jobs_worker.settings import Settings

P = TypeVar("P", bound=Payload)


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
    worker's own log record keeps ``exc_info`` and with it the traceback."""

    def __init__(
        self,
        logger: logging.Logger,
        extra: Mapping[str, object] | None = None,
        *,
        forward: LogForward | None = None,
        forward_level: int = logging.INFO,
    ) -> None:
        super().__init__(logger, extra)
        self.forward = forward
        self.forward_level = forward_level

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


@dataclass(frozen=True)
class JobContext:
    job_id: uuid.UUID
    attempt: int
    job_type: str
    worker_id: str
    trace_id: str
    settings: Settings
    logger: JobLogger


HandlerFn = Callable[[JobContext, P], Coroutine[Any, Any, dict[str, Any]]]


@dataclass(frozen=True)
class HandlerSpec(Generic[P]):
    """One job type: its payload model and the coroutine that runs it."""

    payload_model: type[P]
    run: HandlerFn[P]


Registry = dict[str, HandlerSpec[Any]]
