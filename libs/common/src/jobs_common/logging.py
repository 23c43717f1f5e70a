"""Logging configured once: JSON lines in production, readable lines in development.

Call sites use ``logging.getLogger(__name__)`` and pass stable fields through ``extra``
(``action``, ``job_id``, ``attempt``, ``trace_id``, ``queue``...); the JSON formatter emits
every extra field, so tests and log pipelines match on fields, not on message text.

``trace_id``, ``job_id``, ``attempt``, ``worker_id`` and ``request_id`` need not be passed:
where a scope binds them (``jobs_common.log_context.bind``) the handler's filter adds them to
every record of that scope; a value the call site passes in ``extra`` wins.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

import orjson

from jobs_common.log_context import LogContextFilter

_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()
    | {"message", "asctime", "taskName", "color_message"}
)


def record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The extra fields a call site attached to ``record``."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS}


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(record_fields(record))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class DevFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = f"{record.levelname[0]} {record.name}: {record.getMessage()}"
        fields = record_fields(record)
        if fields:
            base += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        if record.exc_info:
            base += "\n" + self.formatException(record.exc_info)
        return base


def skip_unused_record_fields() -> None:
    """Neither formatter writes the caller's file, line or function, the process or the
    thread: each record stops working them out (a walk up the stack, ``getpid``, the thread's
    name), as the logging HOWTO's "Optimization" section describes. A worker writes two lines
    per job and ships its handler's: that work was a tenth of its logging's cost."""
    logging._srcfile = None  # the switch the HOWTO documents
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def configure_logging(*, service: str, level: str = "INFO", json: bool = True) -> None:
    skip_unused_record_fields()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service) if json else DevFormatter())
    handler.addFilter(LogContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("aiormq", "aio_pika", "pymongo", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
