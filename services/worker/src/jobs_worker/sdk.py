"""The handler SDK: how a team's own module defines job types for the workers.

    from pydantic import BaseModel, Field
    from jobs_worker.sdk import handler, JobContext, RetryLater, FailPermanently

    class Reverse(BaseModel):
        text: str = Field(max_length=10_000)

    @handler("acme.reverse", payload=Reverse, timeout_seconds=30, max_attempts=3)
    async def reverse(ctx: JobContext, payload: Reverse) -> dict:
        ctx.log.info("reversing %d characters", len(payload.text))
        await ctx.progress(50, "half way")
        return {"reversed": payload.text[::-1]}

``handler`` marks a module-level function; the worker imports the modules named in
``WORKER_HANDLER_MODULES`` and those of the ``jobs_platform.handlers`` entry-point group and
serves every marked function it finds there (``jobs_worker.app.handler_loading``). The decorated
function is returned unchanged, so it stays callable in a team's own unit tests. docs/sdk.md
is the reference.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from jobs_worker.domain.context import CancelSignal, HandlerSpec, JobContext
from jobs_worker.domain.errors import FailPermanently, RetryLater

if TYPE_CHECKING:
    from jobs_worker.settings import Settings

__all__ = [
    "CancelSignal",
    "FailPermanently",
    "HandlerSpec",
    "JobContext",
    "ResourceSpec",
    "RetryLater",
    "handler",
    "resource",
    "resource_of",
    "spec_of",
]

F = TypeVar("F", bound=Callable[..., Any])

# Job types and queue names: what the API accepts as a type and RabbitMQ as a name part.
JOB_TYPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
QUEUE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
MAX_TYPE_LENGTH = 100
MAX_TIMEOUT_SECONDS = 1_700
MAX_ATTEMPTS = 20
_MARK = "__jobs_handler__"
_RESOURCE_MARK = "__jobs_resource__"


class HandlerDefinitionError(ValueError):
    """A ``@handler`` whose arguments cannot work (raised where the module defines it)."""


def handler(
    job_type: str,
    *,
    payload: type[BaseModel],
    timeout_seconds: int = 300,
    max_attempts: int = 3,
    queue: str = "default",
    result: type[BaseModel] | None = None,
    slots: int = 1,
    soft_timeout_seconds: int | None = None,
) -> Callable[[F], F]:
    """Mark ``fn(ctx, payload)`` as the handler of ``job_type``.

    ``payload`` (and ``result``, when given) are pydantic models: the payload is validated
    before the handler runs, the return value against ``result`` after it. A ``def`` runs
    in the worker's bounded thread pool, an ``async def`` on its event loop. ``slots`` is
    how many of the worker's concurrency slots one job of the type takes.
    ``soft_timeout_seconds`` (below the attempt's timeout) sets ``ctx.cancelled`` then, so
    the handler may finish cleanly before the timeout ends the attempt."""
    _check(job_type, payload, timeout_seconds, max_attempts, queue, result, slots)
    if soft_timeout_seconds is not None and not 1 <= soft_timeout_seconds < timeout_seconds:
        raise HandlerDefinitionError(
            f"@handler({job_type!r}): soft_timeout_seconds is 1 to below timeout_seconds "
            f"({timeout_seconds})"
        )

    def mark(fn: F) -> F:
        if not callable(fn):
            raise HandlerDefinitionError(f"@handler({job_type!r}) decorates a function")
        spec = HandlerSpec(
            job_type=job_type,
            payload_model=payload,
            run=fn,
            is_async=inspect.iscoroutinefunction(fn),
            timeout_seconds=timeout_seconds,
            max_attempts=max_attempts,
            queue=queue,
            result_model=result,
            slots=slots,
            module=getattr(fn, "__module__", "") or "",
            soft_timeout_seconds=soft_timeout_seconds,
        )
        setattr(fn, _MARK, spec)
        return fn

    return mark


ResourceFactory = Callable[["Settings"], AsyncIterator[Any]]


@dataclass(frozen=True)
class ResourceSpec:
    """Something handlers share for the worker's lifetime (a pool, a client)."""

    name: str
    factory: ResourceFactory
    module: str


def resource(name: str) -> Callable[[ResourceFactory], ResourceFactory]:
    """Mark an async generator ``factory(settings)`` that yields a resource once per worker
    (set up before the first job, closed after the last: code after ``yield`` runs at stop).
    Handlers read it as ``ctx.resource(name)``."""

    def mark(factory: ResourceFactory) -> ResourceFactory:
        if not inspect.isasyncgenfunction(factory):
            raise HandlerDefinitionError(f"@resource({name!r}) decorates an async generator")
        module = getattr(factory, "__module__", "") or ""
        setattr(factory, _RESOURCE_MARK, ResourceSpec(name, factory, module))
        return factory

    return mark


def resource_of(obj: object) -> ResourceSpec | None:
    spec = getattr(obj, _RESOURCE_MARK, None)
    return spec if isinstance(spec, ResourceSpec) else None


def spec_of(obj: object) -> HandlerSpec | None:
    """The spec ``@handler`` attached to ``obj``, if any."""
    spec = getattr(obj, _MARK, None)
    return spec if isinstance(spec, HandlerSpec) else None


def _check(
    job_type: str,
    payload: object,
    timeout_seconds: int,
    max_attempts: int,
    queue: str,
    result: object,
    slots: int,
) -> None:
    where = f"@handler({job_type!r})"
    if len(job_type) > MAX_TYPE_LENGTH or not JOB_TYPE.match(job_type):
        raise HandlerDefinitionError(
            f"{where}: a job type is lower-case words of letters, digits and _ joined by dots "
            f"(acme.reverse), at most {MAX_TYPE_LENGTH} characters"
        )
    for name, model in (("payload", payload), ("result", result)):
        if model is None and name == "result":
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise HandlerDefinitionError(f"{where}: {name}= must be a pydantic model class")
    # The platform's own bounds (the API's): an attempt under RabbitMQ's 30-minute delivery
    # timeout, at most 20 attempts.
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise HandlerDefinitionError(f"{where}: timeout_seconds is 1 to {MAX_TIMEOUT_SECONDS}")
    if not 1 <= max_attempts <= MAX_ATTEMPTS:
        raise HandlerDefinitionError(f"{where}: max_attempts is 1 to {MAX_ATTEMPTS}")
    if not QUEUE_NAME.match(queue):
        raise HandlerDefinitionError(f"{where}: queue {queue!r} is not a valid queue name")
    if not 1 <= slots <= 1_000:
        raise HandlerDefinitionError(f"{where}: slots is 1 to 1000")
