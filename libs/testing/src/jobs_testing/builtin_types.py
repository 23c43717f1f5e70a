"""The built-in job types as a worker announces them, for tests that submit built-in jobs with
no worker running: the registry is seeded with what a worker would send on ``jobs.types``
(built from the worker's own handlers, so nothing here restates a schema)."""

from __future__ import annotations

from functools import cache

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_worker.app.announce import type_info
from jobs_worker.app.handler_loading import ENTRY_POINT_GROUP, load_handlers

SEED_WORKER = "seed-worker"


@cache
def builtin_types() -> tuple[JobTypeInfo, ...]:
    """What a worker with the built-in handlers (its entry points) announces."""
    registry = load_handlers([], entry_point_group=ENTRY_POINT_GROUP).registry
    return tuple(type_info(registry[name]) for name in sorted(registry))


def builtin_announcement(*, worker_id: str = SEED_WORKER, leaving: bool = False) -> WorkerTypes:
    """A worker's announcement of the built-in types (``leaving``: its goodbye, which keeps
    the types and drops the worker from their live count)."""
    return WorkerTypes(
        worker_id=worker_id, types=list(builtin_types()), sent_at=utcnow(), leaving=leaving
    )
