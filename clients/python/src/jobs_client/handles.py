"""What ``JobsClient.submit`` returns: a :class:`JobHandle` per job (``result()`` waits and
gives the parsed result, Celery's ``AsyncResult.get()``) and a :class:`BatchHandle` for a
chain, a group or a batch. The waiting is the client's ``wait``; the reading of results and
the exceptions are :mod:`jobs_client.tasks`'s. :mod:`jobs_client.async_handles` mirrors it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jobs_client.models import BatchSubmitted, CommandAccepted, Job, Submitted
from jobs_client.submitting import BatchReading, members
from jobs_client.tasks import settle

if TYPE_CHECKING:
    from jobs_client.sync_client import JobsClient

R = TypeVar("R")


class JobHandle(Submitted, Generic[R]):
    """A submitted job (a :class:`~jobs_client.Submitted`: ``job_id``, ``idempotency_key``,
    ...) that can wait for its result. ``R`` is its task's result model (``Any`` when
    submitted by the type's name or a task without one)."""

    _client: JobsClient
    _read: Callable[[Any], R]

    def __init__(
        self, submitted: Submitted, *, read: Callable[[Any], R], client: JobsClient
    ) -> None:
        super().__init__(
            job_id=submitted.job_id,
            status=submitted.status,
            idempotency_key=submitted.idempotency_key,
            replayed=submitted.replayed,
        )
        object.__setattr__(self, "_read", read)  # frozen, as Submitted
        object.__setattr__(self, "_client", client)

    def result(self, timeout: float | None = None) -> R:
        """Wait for the job (``timeout`` seconds, None: no limit) and return its result,
        parsed into the task's result model. Raises :class:`~jobs_client.JobFailed` (dead),
        :class:`~jobs_client.JobCancelled`, :class:`~jobs_client.WaitTimeout`."""
        return settle(self.wait(timeout), self._read)

    def wait(self, timeout: float | None = None) -> Job:
        """Wait for the job and return it as it finished, whatever its status."""
        return self._client.wait(self.job_id, timeout=timeout)

    def cancel(self, *, reason: str | None = None) -> CommandAccepted:
        return self._client.cancel(self.job_id, reason=reason)


class BatchHandle(BatchSubmitted, Generic[R]):
    """A submitted batch, chain or group (a :class:`~jobs_client.BatchSubmitted`:
    ``batch_id``, ``job_ids``) with a :class:`JobHandle` per job in ``handles`` (batch
    order: a chain's steps in order). ``result()`` is a chain's last step's result, or the
    list of a group's (a batch's) results."""

    handles: tuple[JobHandle[Any], ...]
    _reading: BatchReading
    _client: JobsClient

    def __init__(
        self, submitted: BatchSubmitted, *, reading: BatchReading, client: JobsClient
    ) -> None:
        super().__init__(
            batch_id=submitted.batch_id,
            job_ids=submitted.job_ids,
            status=submitted.status,
            idempotency_key=submitted.idempotency_key,
            replayed=submitted.replayed,
        )
        handles = tuple(
            JobHandle(member, read=read, client=client)
            for member, read in zip(members(submitted), reading.readers, strict=True)
        )
        object.__setattr__(self, "handles", handles)
        object.__setattr__(self, "_reading", reading)
        object.__setattr__(self, "_client", client)

    def result(self, timeout: float | None = None) -> R:
        """Wait for the last step (every job of the last group) and return its result (the
        list of theirs); raises as :meth:`JobHandle.result` for the first that failed."""
        final = [self.handles[i] for i in self._reading.final]
        result: R = self._reading.result(self._client.wait(final, timeout=timeout))
        return result

    def wait(self, timeout: float | None = None) -> list[Job]:
        """Wait for every job of the batch; they are returned in batch order."""
        return self._client.wait(list(self.handles), timeout=timeout)
