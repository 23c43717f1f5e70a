"""``JobsClient``: the blocking client of the public API.

Every method builds its call in :mod:`jobs_client.calls` and runs it through the request
loop of :mod:`jobs_client.sync_base` (retries, renewals); waiting and following live in
:mod:`jobs_client.sync_follow`. :class:`jobs_client.AsyncJobsClient` has the same methods.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, overload

from jobs_client import calls, schedule_calls, submitting
from jobs_client.canvas import Canvas
from jobs_client.handles import BatchHandle, JobHandle
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
from jobs_client.queues import Queues
from jobs_client.sync_follow import SyncFollowing
from jobs_client.tasks import Task
from jobs_client.waiting import SeenIds

P = TypeVar("P", bound=Payload)
R = TypeVar("R")


class JobsClient(SyncFollowing):
    """The platform's public API, blocking. ``with JobsClient(...) as jobs:`` (or call
    :meth:`close`).

    ``JobsClient(url=None, *, email=None, password=None, token=None, tokens=None,
    token_store=None, timeout=30.0, retries=None, transport=None)``: the base URL (else
    ``JOBS_URL``, else http://127.0.0.1:3000); the credentials (else ``JOBS_TOKEN``); the
    seconds per HTTP request; the :class:`~jobs_client.Retries` budget; an httpx transport.
    See docs/client.md."""

    @property
    def queues(self) -> Queues:
        """The project's queues: ``jobs.queues.set("emails", max_concurrency=5, rate="20/s")``."""
        return Queues(self)

    @overload
    def submit(
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
    ) -> JobHandle[R]: ...

    @overload
    def submit(
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
    ) -> JobHandle[Any]: ...

    @overload
    def submit(
        self,
        type: Canvas[R],
        *,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
    ) -> BatchHandle[R]: ...

    def submit(
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
    ) -> JobHandle[Any] | BatchHandle[Any]:
        """Submit one job (``POST /api/jobs``) by its type's name or as a typed task, and
        return its :class:`~jobs_client.JobHandle`; or a chain or group as one batch
        (``POST /api/batches``): a :class:`~jobs_client.BatchHandle`. Every retry of the
        request carries the same ``Idempotency-Key`` (a new uuid4 unless given), so it never
        makes a second job."""
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
            return BatchHandle(self._run(plan.call), reading=plan.reading, client=self)
        return JobHandle(self._run(plan.call), read=plan.read, client=self)

    def submit_batch(
        self,
        jobs: Iterable[submitting.BatchItem],
        *,
        name: str | None = None,
        submitted_by: str | None = None,
        idempotency_key: str | None = None,
    ) -> BatchHandle[builtins.list[Any]]:
        """Submit up to 10,000 jobs at once, all or nothing (``POST /api/batches``): each a
        :class:`~jobs_client.JobSpec`, a camelCase mapping or a task's signature
        (``task.s(payload)``). Its ``handles`` read each job's result."""
        plan = submitting.batch_plan(
            jobs, name=name, submitted_by=submitted_by, idempotency_key=idempotency_key
        )
        return BatchHandle(self._run(plan.call), reading=plan.reading, client=self)

    def get(self, job_id: str) -> Job:
        """A job with its payload, result, attempts and timeline (``GET /api/jobs/{id}``).
        A job accepted a moment ago is a :class:`NotFound` until the scheduler recorded it
        (``wait`` waits for that)."""
        return self._run(calls.get_job(job_id))

    def list_page(self, *, page_number: int = 1, page_size: int = 20, **filters: Any) -> Page[Job]:
        """One page of ``GET /api/jobs`` (filters as :meth:`list`)."""
        return self._run(calls.list_jobs(page_number=page_number, page_size=page_size, **filters))

    def pages(self, *, page_size: int = calls.MAX_PAGE_SIZE, **filters: Any) -> Iterator[Page[Job]]:
        """The pages of ``GET /api/jobs``, fetched one at a time as you iterate."""
        return self._walk(lambda n: calls.list_jobs(page_number=n, page_size=page_size, **filters))

    def list(
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
    ) -> Iterator[Job]:
        """Your jobs (an admin's: everyone's), newest first unless sorted otherwise, page
        after page as you iterate; at most ``limit``. Each job is yielded once."""
        seen = SeenIds()
        count = 0
        for page in self.pages(
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

    def retry(self, job_id: str) -> CommandAccepted:
        """Retry a dead job (``409`` :class:`Conflict` otherwise); it runs again shortly."""
        return self._run(calls.retry_job(job_id))

    def cancel(self, job_id: str, *, reason: str | None = None) -> CommandAccepted:
        """Cancel a waiting or running job: ``cancelled``, or ``cancel_requested`` while a
        running handler stops (``409`` :class:`Conflict` for a finished job)."""
        return self._run(calls.cancel_job(job_id, reason=reason))

    def job_types(self) -> tuple[JobType, ...]:
        """The job types a submission may name: the built-ins and those workers announced,
        with payload schema, queue, defaults and live workers (``GET /api/job-types``)."""
        return self._run(calls.job_types())

    def list_schedules(self, *, page_size: int = calls.MAX_PAGE_SIZE) -> Iterator[Schedule]:
        """Your schedules (an admin's: all), by name."""
        return self._items(lambda n: calls.list_schedules(page_number=n, page_size=page_size))

    def get_schedule(self, schedule_id: str) -> Schedule:
        return self._run(calls.get_schedule(schedule_id))

    def create_schedule(
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
        """A cron schedule (5 fields, in ``timezone``) that submits this job at each fire."""
        return self._run(
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

    def upsert_schedule(
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
        return self._run(
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

    def pause_schedule(self, schedule_id: str) -> Schedule:
        return self._run(calls.schedule_action(schedule_id, "pause"))

    def resume_schedule(self, schedule_id: str) -> Schedule:
        return self._run(calls.schedule_action(schedule_id, "resume"))

    def delete_schedule(self, schedule_id: str) -> None:
        self._run(calls.delete_schedule(schedule_id))

    def list_dead_letters(
        self,
        *,
        status: str = "open",
        job_type: str | None = None,
        reason: str | None = None,
        fingerprint: str | None = None,
        submitted_by: str | None = None,
        page_size: int = calls.MAX_PAGE_SIZE,
    ) -> Iterator[DeadLetter]:
        """Dead letters, newest first: ``open`` (default), ``resolved`` or ``all``."""
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

    def requeue_dead_letter(
        self,
        dead_letter_id: str,
        *,
        payload: Payload | None = None,
        reason: str | None = None,
    ) -> RequeueAccepted:
        """Run a dead letter's job again, optionally with an edited payload."""
        return self._run(calls.requeue_dead_letter(dead_letter_id, payload=payload, reason=reason))

    def discard_dead_letter(self, dead_letter_id: str, *, reason: str | None = None) -> DeadLetter:
        """Resolve a dead letter without running its job again; the job stays dead."""
        return self._run(calls.discard_dead_letter(dead_letter_id, reason=reason))
