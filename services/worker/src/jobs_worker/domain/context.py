"""What a handler receives: the job context, and the shape of a registered handler."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jobs_common.payloads import Payload

if TYPE_CHECKING:
    from jobs_worker.settings import Settings

P = TypeVar("P", bound=Payload)


class JobLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger that stamps ``job_id``, ``attempt``, ``job_type``, ``trace_id`` and
    ``worker_id`` on every line and merges the call site's own ``extra`` fields."""

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs["extra"] = {**(self.extra or {}), **kwargs.get("extra", {})}
        return msg, kwargs


@dataclass(frozen=True)
class JobContext:
    job_id: uuid.UUID
    attempt: int
    job_type: str
    worker_id: str
    trace_id: str
    settings: Settings
    logger: JobLogger


HandlerFn = Callable[[JobContext, P], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class HandlerSpec(Generic[P]):
    """One job type: its payload model and the coroutine that runs it."""

    payload_model: type[P]
    run: HandlerFn[P]


Registry = dict[str, HandlerSpec[Any]]
