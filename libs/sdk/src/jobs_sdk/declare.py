"""How a team's own module declares job types for the workers: ``@handler`` and ``@resource``.

    from pydantic import BaseModel, Field
    from jobs_sdk import handler, JobContext, RetryLater, FailPermanently

    class Reverse(BaseModel):
        text: str = Field(max_length=10_000)

    @handler("acme.reverse", payload=Reverse, timeout_seconds=30, max_attempts=3)
    async def reverse(ctx: JobContext, payload: Reverse) -> dict:
        ctx.log.info("reversing %d characters", len(payload.text))
        await ctx.progress(50, "half way")
        return {"reversed": payload.text[::-1]}

``handler`` marks a module-level function; the worker imports the modules named in
``WORKER_HANDLER_MODULES`` and those of the ``jobs_platform.handlers`` entry-point group and
serves every marked function it finds there. The decorated function is returned unchanged, so
it stays callable in a team's own unit tests (and ``jobs_sdk.testing.run`` runs it as a worker
would). docs/sdk.md is the reference.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from jobs_sdk.config import HandlerConfig
from jobs_sdk.context import HANDLER_MARK, HandlerSpec
from jobs_sdk.schedules import Cron

F = TypeVar("F", bound=Callable[..., Any])

# Job types and queue names: what the API accepts as a type and RabbitMQ as a name part.
JOB_TYPE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
QUEUE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
MAX_TYPE_LENGTH = 100
MAX_TIMEOUT_SECONDS = 1_700
MAX_ATTEMPTS = 20
_MARK = HANDLER_MARK
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
    schedules: Sequence[Cron] = (),
    config: type[HandlerConfig] | None = None,
) -> Callable[[F], F]:
    """Mark ``fn(ctx, payload)`` as the handler of ``job_type``.

    ``payload`` (and ``result``, when given) are pydantic models: the payload is validated
    before the handler runs, the return value against ``result`` after it. A ``def`` runs
    in the worker's bounded thread pool, an ``async def`` on its event loop. ``slots`` is
    how many of the worker's concurrency slots one job of the type takes.
    ``soft_timeout_seconds`` (below the attempt's timeout) sets ``ctx.cancelled`` then, so
    the handler may finish cleanly before the timeout ends the attempt. ``schedules`` fire
    the type on cron expressions (``jobs_sdk.Cron``); ``config`` is the handler's own
    settings model, read from the environment when the worker loads it (``ctx.config``)."""
    _check(job_type, payload, timeout_seconds, max_attempts, queue, result, slots)
    if soft_timeout_seconds is not None and not 1 <= soft_timeout_seconds < timeout_seconds:
        raise HandlerDefinitionError(
            f"@handler({job_type!r}): soft_timeout_seconds is 1 to below timeout_seconds "
            f"({timeout_seconds})"
        )
    if config is not None and not (isinstance(config, type) and issubclass(config, HandlerConfig)):
        raise HandlerDefinitionError(f"@handler({job_type!r}): config= is a HandlerConfig class")

    names = [cron.schedule_name(job_type) for cron in schedules]
    if len(set(names)) != len(names):
        raise HandlerDefinitionError(
            f"@handler({job_type!r}): give each of its schedules a name of its own"
        )
    for cron in schedules:
        if isinstance(cron.payload, BaseModel) and not isinstance(cron.payload, payload):
            raise HandlerDefinitionError(
                f"@handler({job_type!r}): schedule {cron.schedule_name(job_type)!r} carries "
                f"a {type(cron.payload).__name__}, not a {payload.__name__}"
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
            schedules=tuple(schedules),
            config_model=config,
        )
        setattr(fn, _MARK, spec)
        return fn

    return mark


ResourceFactory = Callable[[], AsyncIterator[Any]]


@dataclass(frozen=True)
class ResourceSpec:
    """Something handlers share for the worker's lifetime (a pool, a client)."""

    name: str
    factory: ResourceFactory
    module: str


def resource(name: str) -> Callable[[ResourceFactory], ResourceFactory]:
    """Mark an async generator ``factory()`` that yields a resource once per worker (set up
    before the first job, closed after the last: code after ``yield`` runs at stop). Handlers
    read it as ``ctx.resource(name)``; the factory reads its own configuration
    (``SomeConfig.from_env()``)."""

    def mark(factory: ResourceFactory) -> ResourceFactory:
        if not inspect.isasyncgenfunction(factory):
            raise HandlerDefinitionError(f"@resource({name!r}) decorates an async generator")
        if any(
            p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            for p in inspect.signature(factory).parameters.values()
        ):
            raise HandlerDefinitionError(
                f"@resource({name!r}): the factory takes no arguments (it reads its own "
                "configuration, a HandlerConfig's from_env(); the worker's settings are not "
                "handed to handlers)"
            )
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
    # timeout (docs/sdk.md, "Long jobs"), at most 20 attempts.
    if not 1 <= timeout_seconds <= MAX_TIMEOUT_SECONDS:
        raise HandlerDefinitionError(f"{where}: timeout_seconds is 1 to {MAX_TIMEOUT_SECONDS}")
    if not 1 <= max_attempts <= MAX_ATTEMPTS:
        raise HandlerDefinitionError(f"{where}: max_attempts is 1 to {MAX_ATTEMPTS}")
    if not QUEUE_NAME.match(queue):
        raise HandlerDefinitionError(f"{where}: queue {queue!r} is not a valid queue name")
    if not 1 <= slots <= 1_000:
        raise HandlerDefinitionError(f"{where}: slots is 1 to 1000")
