"""``AsyncJobsClient``: the asyncio client, the mirror of :mod:`jobs_client.sync_client`
method for method (same names, arguments and answers; its iterators are async iterators).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, overload

from jobs_client import calls, schedule_calls, submitting
from jobs_client.async_follow import AsyncFollowing
from jobs_client.async_handles import AsyncBatchHandle, AsyncJobHandle
from jobs_client.async_queues import AsyncQueues
from jobs_client.canvas import Canvas
from jobs_client.models import (
    CommandAccepted,
    DeadLetter,
    Job,
    JobType,
    Page,
    Payload,
    RequeueAccepted,
    RetryPolicy,
    Schedule,
)
from jobs_client.tasks import Task
from jobs_client.waiting import SeenIds

P = TypeVar("P", bound=Payload)
R = TypeVar("R")


class AsyncJobsClient(AsyncFollowing):
    """The platform's public API for asyncio. ``async with AsyncJobsClient(...) as jobs:``
    (or ``await jobs.aclose()``). The constructor's arguments are those of
    :class:`~jobs_client.JobsClient` (``transport``: an ``httpx.AsyncBaseTransport``)."""

    @property
    def queues(self) -> AsyncQueues:
        return AsyncQueues(self)

    @overload
    async def submit(
        self,
        type: Task[P, R],
        payload: P,
        *,
        priority: int | None = None,
        run_at: datetime | str | None = None,
        delay: calls.Delay | None = None,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
        depends_on: Sequence[str] | None = None,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
        queue: str | None = None,
    ) -> AsyncJobHandle[R]: ...

    @overload
    async def submit(
        self,
        type: str,
        payload: Payload,
        *,
        priority: int | None = None,
        run_at: datetime | str | None = None,
        delay: calls.Delay | None = None,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
        depends_on: Sequence[str] | None = None,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
        queue: str | None = None,
    ) -> AsyncJobHandle[Any]: ...

    @overload
    async def submit(
        self,
        type: Canvas[R],
        *,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
    ) -> AsyncBatchHandle[R]: ...

    async def submit(
        self,
        type: str | Task[Any, Any] | Canvas[Any],
        payload: Payload | None = None,
        *,
        priority: int | None = None,
        run_at: datetime | str | None = None,
        delay: calls.Delay | None = None,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
        depends_on: Sequence[str] | None = None,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
        queue: str | None = None,
    ) -> AsyncJobHandle[Any] | AsyncBatchHandle[Any]:
        """As :meth:`JobsClient.submit`: an :class:`~jobs_client.AsyncJobHandle`, or an
        :class:`~jobs_client.AsyncBatchHandle` for a chain or group."""
        plan = submitting.plan(
            type,
            payload,
            submitted_by=submitted_by,
            idempotency_key=idempotency_key,
            priority=priority,
            run_at=run_at,
            delay=delay,
            max_attempts=max_attempts,
            timeout_seconds=timeout_seconds,
            retry_policy=retry_policy,
            depends_on=depends_on,
            queue=queue,
        )
        if isinstance(plan, submitting.BatchPlan):
            return AsyncBatchHandle(await self._run(plan.call), reading=plan.reading, client=self)
        return AsyncJobHandle(await self._run(plan.call), read=plan.read, client=self)

    async def submit_batch(
        self,
        jobs: Iterable[submitting.BatchItem],
        *,
        name: str | None = None,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
    ) -> AsyncBatchHandle[builtins.list[Any]]:
        """As :meth:`JobsClient.submit_batch`; its ``handles`` are awaited."""
        plan = submitting.batch_plan(
            jobs, name=name, submitted_by=submitted_by, idempotency_key=idempotency_key
        )
        return AsyncBatchHandle(await self._run(plan.call), reading=plan.reading, client=self)

    async def get(self, job_id: str) -> Job:
        return await self._run(calls.get_job(job_id))

    async def list_page(
        self, *, page_number: int = 1, page_size: int = 20, **filters: Any
    ) -> Page[Job]:
        return await self._run(
            calls.list_jobs(page_number=page_number, page_size=page_size, **filters)
        )

    def pages(
        self, *, page_size: int = calls.MAX_PAGE_SIZE, **filters: Any
    ) -> AsyncIterator[Page[Job]]:
        return self._walk(lambda n: calls.list_jobs(page_number=n, page_size=page_size, **filters))

    async def list(
        self,
        *,
        status: str | Sequence[str] | None = None,
        type: str | None = None,
        priority: int | None = None,
        schedule_id: str | None = None,
        batch_id: str | None = None,
        submitted_by: str | None = None,
        created_from: datetime | None = None,
        created_to: datetime | None = None,
        sort_by: str | None = None,
        sort_direction: str | None = None,
        page_size: int = calls.MAX_PAGE_SIZE,
        limit: int | None = None,
    ) -> AsyncIterator[Job]:
        seen = SeenIds()
        count = 0
        async for page in self.pages(
            page_size=page_size,
            status=status,
            type=type,
            priority=priority,
            schedule_id=schedule_id,
            batch_id=batch_id,
            submitted_by=submitted_by,
            created_from=created_from,
            created_to=created_to,
            sort_by=sort_by,
            sort_direction=sort_direction,
        ):
            for job in page.items:
                if limit is not None and count >= limit:
                    return
                if seen.fresh(job.id):
                    count += 1
                    yield job

    async def retry(self, job_id: str) -> CommandAccepted:
        return await self._run(calls.retry_job(job_id))

    async def cancel(self, job_id: str, *, reason: str | None = None) -> CommandAccepted:
        return await self._run(calls.cancel_job(job_id, reason=reason))

    async def job_types(self) -> tuple[JobType, ...]:
        return await self._run(calls.job_types())

    def list_schedules(self, *, page_size: int = calls.MAX_PAGE_SIZE) -> AsyncIterator[Schedule]:
        return self._items(lambda n: calls.list_schedules(page_number=n, page_size=page_size))

    async def get_schedule(self, schedule_id: str) -> Schedule:
        return await self._run(calls.get_schedule(schedule_id))

    async def create_schedule(
        self,
        name: str,
        cron: str,
        *,
        type: str,
        payload: Payload,
        timezone: str = "UTC",
        priority: int = 2,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
    ) -> Schedule:
        return await self._run(
            calls.create_schedule(
                name=name,
                cron=cron,
                timezone=timezone,
                type=type,
                payload=payload,
                priority=priority,
                max_attempts=max_attempts,
                timeout_seconds=timeout_seconds,
                retry_policy=retry_policy,
            )
        )

    async def upsert_schedule(
        self,
        name: str,
        job_type: str | Task[Any, Any],
        payload: Payload,
        *,
        cron: str,
        timezone: str = "UTC",
        priority: int = 2,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
    ) -> Schedule:
        """Create your project's schedule ``name``, or update its cron, time zone and job in
        place (its id, owner, fire history and pause stay): a deploy may run it every time.
        Raises :class:`Conflict` for a schedule declared in code."""
        return await self._run(
            schedule_calls.upsert_schedule(
                name=name,
                job_type=job_type,
                payload=payload,
                cron=cron,
                timezone=timezone,
                priority=priority,
                max_attempts=max_attempts,
                timeout_seconds=timeout_seconds,
                retry_policy=retry_policy,
            )
        )

    async def pause_schedule(self, schedule_id: str) -> Schedule:
        return await self._run(calls.schedule_action(schedule_id, "pause"))

    async def resume_schedule(self, schedule_id: str) -> Schedule:
        return await self._run(calls.schedule_action(schedule_id, "resume"))

    async def delete_schedule(self, schedule_id: str) -> None:
        await self._run(calls.delete_schedule(schedule_id))

    def list_dead_letters(
        self,
        *,
        status: str = "open",
        job_type: str | None = None,
        reason: str | None = None,
        fingerprint: str | None = None,
        submitted_by: str | None = None,
        page_size: int = calls.MAX_PAGE_SIZE,
    ) -> AsyncIterator[DeadLetter]:
        return self._items(
            lambda n: calls.list_dead_letters(
                status=status,
                reason=reason,
                job_type=job_type,
                fingerprint=fingerprint,
                submitted_by=submitted_by,
                page_number=n,
                page_size=page_size,
            )
        )

    async def requeue_dead_letter(
        self,
        dead_letter_id: str,
        *,
        payload: Payload | None = None,
        reason: str | None = None,
    ) -> RequeueAccepted:
        return await self._run(
            calls.requeue_dead_letter(dead_letter_id, payload=payload, reason=reason)
        )

    async def discard_dead_letter(
        self, dead_letter_id: str, *, reason: str | None = None
    ) -> DeadLetter:
        return await self._run(calls.discard_dead_letter(dead_letter_id, reason=reason))
