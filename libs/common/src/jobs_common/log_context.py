"""The fields every log line carries where they are known (``trace_id``, ``job_id``,
``attempt``, ``worker_id``, ``request_id``), bound once per scope instead of passed by hand.

Each field is a :class:`contextvars.ContextVar`: a value bound with :func:`bind` holds for the
``with`` block and the tasks created inside it (``asyncio.create_task`` copies the context),
and concurrent tasks never see each other's values. :class:`LogContextFilter`, installed on the
handler by :func:`jobs_common.logging.configure_logging`, copies the bound values onto every
record; a field the call site passed in ``extra`` wins over the bound one.

Where a scope begins: the HTTP middlewares (request id, trace id), the worker's delivery task
(job id, attempt, trace id, worker id), the scheduler's per-message appliers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

FIELDS = ("trace_id", "job_id", "attempt", "worker_id", "request_id")

_VARS: dict[str, ContextVar[Any]] = {
    name: ContextVar(f"jobs_log_{name}", default=None) for name in FIELDS
}

TRACE_ID_HEADER = "x-trace-id"
TRACEPARENT_HEADER = "traceparent"
_VALID_TRACE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")


@contextmanager
def bind(**fields: Any) -> Iterator[None]:
    """Bind log fields for the ``with`` block; the previous values come back after it.

    ``bind(trace_id="...", job_id=job_id)``; a ``None`` value binds "unknown" for the scope.
    """
    unknown = set(fields) - _VARS.keys()
    if unknown:
        raise TypeError(f"not a log context field: {', '.join(sorted(unknown))}")
    tokens = [(_VARS[name], _VARS[name].set(value)) for name, value in fields.items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def current() -> dict[str, Any]:
    """The fields bound here and now (the unbound ones left out)."""
    return {name: value for name, var in _VARS.items() if (value := var.get()) is not None}


class LogContextFilter(logging.Filter):
    """Adds the bound fields to each record, unless the call site set them in ``extra``."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in _VARS.items():
            value = var.get()
            if value is not None and name not in record.__dict__:
                setattr(record, name, value)
        return True


def trace_id_from_headers(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The trace id an HTTP request carries: ``X-Trace-Id`` if valid, else the trace id of a
    W3C ``traceparent``, else None. ``headers`` are ASGI's (lower-case names, bytes)."""
    traceparent: str | None = None
    for raw_name, raw_value in headers:
        if raw_name == b"x-trace-id":
            value = raw_value.decode("latin-1")
            if _VALID_TRACE_ID.match(value):
                return value
        elif raw_name == b"traceparent":
            match = _TRACEPARENT.match(raw_value.decode("latin-1").strip())
            if match and match.group(1) != "0" * 32:
                traceparent = match.group(1)
    return traceparent
