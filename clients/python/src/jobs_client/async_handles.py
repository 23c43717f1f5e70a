"""What ``AsyncJobsClient.submit`` returns, the mirror of :mod:`jobs_client.handles`:
``await handle.result()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from jobs_client.models import BatchSubmitted, CommandAccepted, Job, Submitted
from jobs_client.submitting import BatchReading, members
from jobs_client.tasks import settle

if TYPE_CHECKING:
    from jobs_client.async_client import AsyncJobsClient

R = TypeVar("R")


class AsyncJobHandle(Submitted, Generic[R]):
    """A submitted job (a :class:`~jobs_client.Submitted`) that can wait for its result:
    ``await handle.result(timeout=60)``. See :class:`jobs_client.JobHandle`."""

    _client: AsyncJobsClient
    _read: Callable[[Any], R]

    def __init__(
        self, submitted: Submitted, *, read: Callable[[Any], R], client: AsyncJobsClient
    ) -> None:
        super().__init__(
            job_id=submitted.job_id,
            status=submitted.status,
            idempotency_key=submitted.idempotency_key,
            replayed=submitted.replayed,
        )
        object.__setattr__(self, "_read", read)  # frozen, as Submitted
        object.__setattr__(self, "_client", client)

    async def result(self, timeout: float | None = None) -> R:
        return settle(await self.wait(timeout), self._read)

    async def wait(self, timeout: float | None = None) -> Job:
        return await self._client.wait(self.job_id, timeout=timeout)

    async def cancel(self, *, reason: str | None = None) -> CommandAccepted:
        return await self._client.cancel(self.job_id, reason=reason)


class AsyncBatchHandle(BatchSubmitted, Generic[R]):
    """A submitted batch, chain or group with an :class:`AsyncJobHandle` per job in
    ``handles``. See :class:`jobs_client.BatchHandle`."""

    handles: tuple[AsyncJobHandle[Any], ...]
    _reading: BatchReading
    _client: AsyncJobsClient

    def __init__(
        self, submitted: BatchSubmitted, *, reading: BatchReading, client: AsyncJobsClient
    ) -> None:
        super().__init__(
            batch_id=submitted.batch_id,
            job_ids=submitted.job_ids,
            status=submitted.status,
            idempotency_key=submitted.idempotency_key,
            replayed=submitted.replayed,
        )
        handles = tuple(
            AsyncJobHandle(member, read=read, client=client)
            for member, read in zip(members(submitted), reading.readers, strict=True)
        )
        object.__setattr__(self, "handles", handles)
        object.__setattr__(self, "_reading", reading)
        object.__setattr__(self, "_client", client)

    async def result(self, timeout: float | None = None) -> R:
        final = [self.handles[i] for i in self._reading.final]
        result: R = self._reading.result(await self._client.wait(final, timeout=timeout))
        return result

    async def wait(self, timeout: float | None = None) -> list[Job]:
        return await self._client.wait(list(self.handles), timeout=timeout)
