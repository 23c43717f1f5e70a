"""Which handlers a worker serves: the modules named in ``WORKER_HANDLER_MODULES`` and the
``jobs_platform.handlers`` entry points (the built-in types are one), each scanned for
functions marked by ``jobs_sdk.handler``.

Anything wrong stops the worker at start with a message naming the module and the cause:
an import error, no handler in a module, two handlers for one type."""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from jobs_sdk.config import HandlerConfig
from jobs_sdk.context import HandlerSpec, Registry
from jobs_sdk.declare import HandlerDefinitionError, ResourceSpec, resource_of, spec_of
from jobs_worker.settings import Settings

ENTRY_POINT_GROUP = "jobs_platform.handlers"


class HandlerLoadError(RuntimeError):
    """The worker cannot start with these handler modules."""


@dataclass
class Handlers:
    """What a worker serves, and the resources its handlers share."""

    registry: Registry = field(default_factory=dict)
    resources: dict[str, ResourceSpec] = field(default_factory=dict)


def handlers_for(settings: Settings) -> Handlers:
    """The handlers ``settings`` name: WORKER_HANDLER_MODULES, and the entry points unless
    WORKER_HANDLER_ENTRY_POINTS is false."""
    group = ENTRY_POINT_GROUP if settings.handler_entry_points else None
    return load_handlers(settings.handler_modules, entry_point_group=group)


def served_queues(settings: Settings, registry: Registry) -> list[str]:
    """The named queues this worker consumes: WORKER_QUEUES, else its handlers' queues. A
    queue none of its handlers uses is refused (it would take jobs it cannot run)."""
    own = sorted({spec.queue for spec in registry.values()})
    wanted = list(dict.fromkeys(settings.queues)) or own
    foreign = [queue for queue in wanted if queue not in own]
    if foreign:
        raise HandlerLoadError(
            f"WORKER_QUEUES names {', '.join(foreign)}, a queue none of this worker's "
            f"handlers uses (theirs: {', '.join(own)})"
        )
    return wanted


def load_handlers(modules: Iterable[str], *, entry_point_group: str | None) -> Handlers:
    """Every handler of ``modules`` and of the entry-point group (None: no entry points)."""
    handlers = Handlers()
    registry = handlers.registry
    sources: list[tuple[str, object]] = [(name, _import(name)) for name in modules]
    if entry_point_group is not None:
        for point in entry_points(group=entry_point_group):
            sources.append((f"entry point {point.name} = {point.value}", _load_point(point)))
    for origin, loaded in sources:
        found = _handlers_in(loaded)
        if not found:
            raise HandlerLoadError(f"{origin}: defines no @handler function")
        for spec in found:
            _add(registry, spec, origin)
        for resource in _resources_in(loaded):
            _add_resource(handlers.resources, resource, origin)
    if not registry:
        raise HandlerLoadError(
            "no handlers: set WORKER_HANDLER_MODULES or install a package with a "
            f"{ENTRY_POINT_GROUP!r} entry point"
        )
    return handlers


def handler_configs(registry: Registry) -> dict[str, Any]:
    """Each type's own configuration (``@handler(config=...)``), read from the environment
    once per model when the worker starts: a bad value stops the worker, naming the handler,
    rather than failing its jobs."""
    read: dict[type[HandlerConfig], Any] = {}
    configs: dict[str, Any] = {}
    for job_type, spec in registry.items():
        model = spec.config_model
        if model is None:
            continue
        if model not in read:
            try:
                read[model] = model.from_env()
            except ValidationError as exc:
                raise HandlerLoadError(
                    f"{spec.module}: the configuration of {job_type!r} ({model.__name__}, "
                    f"variables {model.env_prefix()}*): {exc}"
                ) from exc
        configs[job_type] = read[model]
    return configs


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except HandlerDefinitionError as exc:
        raise HandlerLoadError(f"handler module {name}: {exc}") from exc
    except Exception as exc:
        raise HandlerLoadError(f"handler module {name}: cannot import: {_cause(exc)}") from exc


def _load_point(point: object) -> object:
    name = getattr(point, "value", repr(point))
    try:
        return point.load()  # type: ignore[attr-defined]
    except HandlerDefinitionError as exc:
        raise HandlerLoadError(f"handler entry point {name}: {exc}") from exc
    except Exception as exc:
        raise HandlerLoadError(f"handler entry point {name}: cannot load: {_cause(exc)}") from exc


def _handlers_in(loaded: object) -> list[HandlerSpec]:
    """The marked functions of a module (defined in it, in definition order), or the one
    marked function an entry point names."""
    own = spec_of(loaded)
    if own is not None:
        return [own]
    if not isinstance(loaded, ModuleType):
        return []
    specs = [spec for value in vars(loaded).values() if (spec := spec_of(value)) is not None]
    return list({id(spec): spec for spec in specs}.values())


def _resources_in(loaded: object) -> list[ResourceSpec]:
    if not isinstance(loaded, ModuleType):
        return []
    return [spec for value in vars(loaded).values() if (spec := resource_of(value)) is not None]


def _add_resource(resources: dict[str, ResourceSpec], resource: ResourceSpec, origin: str) -> None:
    """Resources are the worker's, shared by name: a name two modules claim is refused (the
    second one's handlers would be handed the first one's resource)."""
    previous = resources.setdefault(resource.name, resource)
    if previous is not resource and previous.factory is not resource.factory:
        raise HandlerLoadError(
            f"{origin}: two resources named {resource.name!r}: "
            f"{previous.module}.{getattr(previous.factory, '__name__', '?')} and "
            f"{resource.module}.{getattr(resource.factory, '__name__', '?')}; "
            "name each after its module (acme.http)"
        )


def _add(registry: Registry, spec: HandlerSpec, origin: str) -> None:
    previous = registry.get(spec.job_type)
    if previous is not None and previous is not spec:
        raise HandlerLoadError(
            f"{origin}: two handlers for job type {spec.job_type!r}: "
            f"{previous.module}.{getattr(previous.run, '__name__', '?')} and "
            f"{spec.module}.{getattr(spec.run, '__name__', '?')}"
        )
    registry[spec.job_type] = spec


def _cause(exc: BaseException) -> str:
    """The exception and where in the module it was raised (the last frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
