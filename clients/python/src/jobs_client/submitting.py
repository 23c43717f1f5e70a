"""What ``submit`` and ``submit_batch`` send and how their handles read results, shared by
both clients: ``submit`` takes a job type's name, a :class:`~jobs_client.tasks.Task` or a
:class:`~jobs_client.canvas.Canvas`, and each becomes a call plus the readers of its results.
The clients run the call and wrap the answer in their handle (:mod:`jobs_client.handles`,
:mod:`jobs_client.async_handles`). Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobs_client import calls
from jobs_client.canvas import Canvas
from jobs_client.exchange import Call
from jobs_client.models import BatchSubmitted, Job, JobSpec, Payload, Submitted
from jobs_client.tasks import Signature, Task, as_is, settle

Reader = Callable[[Any], Any]
BatchItem = JobSpec | Mapping[str, Any] | Signature[Any, Any]


@dataclass(frozen=True)
class JobPlan:
    """One job: its ``POST /api/jobs`` and the reader of its result."""

    call: Call[Submitted]
    read: Reader


@dataclass(frozen=True)
class BatchReading:
    """How a batch's handle reads its result: the reader of each job (in batch order), the
    places of the jobs whose results make the result, and whether that is one value (a
    chain's last step) or a list (a group, a plain batch)."""

    readers: tuple[Reader, ...]
    final: tuple[int, ...]
    single: bool

    def result(self, finished: Sequence[Job]) -> Any:
        """The result from the finished jobs at :attr:`final` (in that order); raises as
        :func:`~jobs_client.tasks.settle` does for the first that did not succeed."""
        values = [settle(job, self.readers[i]) for i, job in zip(self.final, finished, strict=True)]
        return values[0] if self.single else values


@dataclass(frozen=True)
class BatchPlan:
    call: Call[BatchSubmitted]
    reading: BatchReading


def plan(
    type: str | Task[Any, Any] | Canvas[Any],
    payload: Payload | None,
    *,
    submitted_by: str | None,
    idempotency_key: str | None,
    **options: Any,
) -> JobPlan | BatchPlan:
    """``submit``'s arguments as a call: ``options`` are its job options (``priority``,
    ``run_at``, ...), None when not given."""
    if isinstance(type, Canvas):
        if payload is not None or any(v is not None for v in options.values()):
            raise TypeError(
                "a chain or group is submitted as it is: its steps carry their payloads and "
                "options (task.s(payload, priority=...))"
            )
        return canvas_plan(type, submitted_by=submitted_by, idempotency_key=idempotency_key)
    if payload is None:
        raise TypeError("submit(type, payload): a job needs its payload")
    if isinstance(type, Task):
        name, read = type.name, type.read
    elif isinstance(type, str):
        name, read = type, as_is
    else:
        raise TypeError(f"submit takes a job type's name, a task or a chain/group: {type!r}")
    body = calls.job_body(type=name, payload=payload, submitted_by=submitted_by, **options)
    return JobPlan(calls.submit(body, idempotency_key), read)


def batch_plan(
    jobs: Iterable[BatchItem],
    *,
    name: str | None,
    submitted_by: str | None,
    idempotency_key: str | None,
) -> BatchPlan:
    """``submit_batch``: specs, camelCase mappings or signatures, as given; its result is
    the list of every job's result."""
    specs: list[JobSpec | Mapping[str, Any]] = []
    readers: list[Reader] = []
    for item in jobs:
        if isinstance(item, Signature):
            specs.append(item.spec)
            readers.append(item.task.read)
        else:
            specs.append(item)
            readers.append(as_is)
    call = calls.submit_batch(
        specs, name=name, submitted_by=submitted_by, idempotency_key=idempotency_key
    )
    return BatchPlan(call, BatchReading(tuple(readers), tuple(range(len(specs))), single=False))


def canvas_plan(
    canvas: Canvas[Any], *, submitted_by: str | None, idempotency_key: str | None
) -> BatchPlan:
    """A chain or group as one batch (``POST /api/batches``) of jobs depending on each other."""
    call = calls.submit_batch(
        canvas.specs(), name=None, submitted_by=submitted_by, idempotency_key=idempotency_key
    )
    reading = BatchReading(tuple(canvas.readers()), canvas.final, not canvas.ends_in_group)
    return BatchPlan(call, reading)


def members(batch: BatchSubmitted) -> list[Submitted]:
    """Each job of a submitted batch as a submission of its own (for its handle)."""
    return [
        Submitted(
            job_id=job_id,
            status=batch.status,
            idempotency_key=batch.idempotency_key,
            replayed=batch.replayed,
        )
        for job_id in batch.job_ids
    ]
