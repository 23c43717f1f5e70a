"""One delivery from a ready queue, start to finish, settled by the one ack policy
(:mod:`jobs_common.acks`, the only place that acks, requeues or rejects):

- unparseable body or unknown schema version: poison, ``reject(requeue=False)`` -> ``jobs.dead``;
- else run the handler under the job's timeout, publish ``JobResult`` (confirmed) and only
  then ack; ``JobRunning`` (confirmed) goes out when the handler has run
  ``running_report_delay`` (a quick attempt sends only its result, which says when it
  started), or before the handler starts when the delay is 0 or the delivery is a redelivery;
- a redelivered message may be a copy of an attempt another worker still runs or has run (its
  connection was cut): it runs only when the scheduler grants a claim (``app/claims.py``);
  ``skip`` acks it without running anything;
- a ``JobRunning`` that is not confirmed before the handler starts: the delivery is handed
  back (``nack(requeue=True)`` after a growing pause, or left to the broker when the channel
  is gone); after ``max_requeues`` hand-backs by this worker it is rejected to ``jobs.dead``
  instead, where the scheduler re-dispatches the job or, past its limit, dead-letters it;
- a ``JobResult`` that is not confirmed: the outcome is kept and published again (same
  attempt, the scheduler's fencing token) after a growing pause until the broker confirms
  it; meanwhile the heartbeat lists the attempt, so its lease holds and a claim of its
  redelivered copy waits. A computed result is never thrown away for another run;
- a ``CancelAttempt`` for the attempt (remembered in the cancelled set, or arriving while it
  runs): its handler task is cancelled (or never started), ``JobResult`` with outcome
  ``cancelled`` is published (confirmed) and the delivery acked;
- the delivery task itself cancelled (shutdown past the drain timeout): nothing is published
  or acked, so the broker redelivers the message to another worker;
- the worker went quiet (``quiet`` set, an admin's ``WorkerControl``) while the delivery
  waited for a slot: handed back at once (``nack(requeue=True)``, not counted against the
  requeue limit) for another worker to run; the attempts already running finish here.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

from aio_pika.abc import AbstractIncomingMessage
from pydantic import BaseModel, ValidationError

from jobs_common import acks, log_context
from jobs_common.contracts import (
    COPY_HEADER,
    FRESH_DISPATCH,
    FRESH_HEADER,
    JobDispatch,
    JobResult,
    JobRunning,
    parse_message,
    utcnow,
)
from jobs_common.rabbit import Publisher
from jobs_common.topology import RESULTS, RUNNING
from jobs_sdk.context import HandlerSpec, JobContext, JobLogger, LogForward, Registry
from jobs_sdk.errors import AttemptError, JobFailure, classify
from jobs_sdk.follow_ups import Submitter
from jobs_sdk.outcomes import (
    Outcome,
    cancelled,
    invalid_payload,
    own_cancelled_error,
    succeeded,
    timed_out,
)
from jobs_sdk.parents import NO_PARENTS, Parent, ParentResults
from jobs_worker.adapters import metrics
from jobs_worker.adapters.result_batches import QueuedLines, ResultBatcher
from jobs_worker.app.active_jobs import ActiveJob, ActiveJobs, Phase
from jobs_worker.app.claims import ClaimWaiters
from jobs_worker.domain.cancellations import CancelledSet
from jobs_worker.domain.errors import job_error
from jobs_worker.domain.slots import SlotPool
from jobs_worker.domain.tally import Tally
from jobs_worker.settings import Settings

log = logging.getLogger(__name__)
job_log = logging.getLogger("jobs_worker.job")

ForwarderFactory = Callable[[JobDispatch], LogForward]


class JobExecutor:
    def __init__(
        self,
        *,
        settings: Settings,
        registry: Registry,
        publisher: Publisher,
        worker_id: str,
        active: ActiveJobs,
        cancelled: CancelledSet,
        log_forwarder: ForwarderFactory | None = None,
        queued_lines: QueuedLines | None = None,
        resources: Mapping[str, Any] | None = None,
        configs: Mapping[str, Any] | None = None,
        slots: int | None = None,
        claims: ClaimWaiters | None = None,
        submitter: Submitter | None = None,
    ) -> None:
        self.settings = settings
        self.submitter = submitter  # ctx.submit's (None: this worker cannot submit)
        self.registry = registry
        self.resources = dict(resources or {})
        self.configs = dict(configs or {})  # each type's own HandlerConfig, read at load
        # Sync (def) handlers run here, never on the event loop.
        self.sync_pool = ThreadPoolExecutor(
            max_workers=settings.sync_handler_threads, thread_name_prefix="handler"
        )
        self.slots = SlotPool(slots or settings.concurrency)
        self.quiet = asyncio.Event()  # set: take no new job (deliveries not started go back)
        self.tally = Tally()  # attempts run here, for the heartbeat
        self.publisher = publisher
        self.worker_id = worker_id
        self.active = active
        self.cancelled = cancelled
        self.claims = claims if claims is not None else ClaimWaiters(worker_id)
        self.log_forwarder = log_forwarder
        levels = logging.getLevelNamesMapping()
        self.forward_level = levels[settings.job_log_level.upper()]
        self.local_level = levels[settings.job_log_local_level.upper()]
        self.settler = acks.Settler(settings.ack_policy, capacity=settings.requeue_counts_capacity)
        self.results = ResultBatcher(
            partial(publisher.publish, RESULTS),
            max_batch=settings.result_batch_size,
            lines=queued_lines,
            max_lines=settings.job_log_batch_size,
        )

    def type_label(self, job_type: str) -> str:
        return job_type if job_type in self.registry else "unknown"

    async def process(self, message: AbstractIncomingMessage, queue: str) -> None:
        try:
            dispatch = parse_message(JobDispatch, message.body)
        except ValueError as exc:  # pydantic's ValidationError and orjson's errors included
            await self._reject_poison(message, queue, exc)
            return
        # Every line of this delivery (and of the handler task it starts) names the attempt.
        with log_context.bind(
            job_id=str(dispatch.job_id),
            attempt=dispatch.attempt,
            trace_id=dispatch.trace_id,
            worker_id=self.worker_id,
        ):
            await self._process(message, dispatch, queue)

    async def _process(
        self, message: AbstractIncomingMessage, dispatch: JobDispatch, queue: str
    ) -> None:
        current = asyncio.current_task()
        assert current is not None
        job = ActiveJob(dispatch=dispatch, queue=queue, task=current)
        existing = self.active.get(job.key)
        if existing is not None:
            # A redelivery of an attempt still running here (its first channel died).
            await existing.done.wait()
        if self.active.reported(job.key):
            # A redelivery of an attempt finished here, its ack lost with the connection.
            log.info("duplicate delivery of a finished attempt acked", extra=self._fields(job))
            await self._ack(message, job)
            return
        self.active.add(job)
        try:
            reason = self.cancelled.reason_for(dispatch.job_id, dispatch.attempt)
            if reason is not None:
                await self._refuse(message, job, reason)
            elif dispatch.job_type not in self.registry:
                await self._unserved(message, job)
            elif (ask := claim_to_ask(message, dispatch)) is None or await self._granted(
                message, job, ask
            ):
                spec = self.registry.get(dispatch.job_type)
                slots = spec.slots if spec is not None else 1
                async with self.slots.hold(slots, unless=self.quiet) as held:
                    if not held:
                        await self._return_unstarted(message, job)
                        return
                    # Fresh when it came, it may have waited for a slot past its fresh_until
                    # (long jobs hold the slots): a copy of it may be granted elsewhere by now.
                    if ask is None and (ask := claim_to_ask(message, dispatch)) is not None:
                        if not await self._granted(message, job, ask):
                            return
                    await self._execute(message, job, claimed=ask is not None)
        except asyncio.CancelledError:
            log.warning(
                "job abandoned; left unacked",
                extra={**self._fields(job), "action": "job_abandoned"},
            )
            raise
        finally:
            self.active.remove(job)
            job.done.set()

    def _fields(self, job: ActiveJob) -> dict[str, Any]:
        return {
            "job_id": str(job.dispatch.job_id),
            "attempt": job.dispatch.attempt,
            "job_type": job.dispatch.job_type,
            "trace_id": job.dispatch.trace_id,
            "queue": job.queue,
            "worker_id": self.worker_id,
        }

    def _logger(self, job: ActiveJob, fields: dict[str, Any]) -> JobLogger:
        forward = self.log_forwarder(job.dispatch) if self.log_forwarder is not None else None
        return JobLogger(
            job_log,
            fields,
            forward=forward,
            forward_level=self.forward_level,
            local_level=self.local_level,
        )

    async def _refuse(self, message: AbstractIncomingMessage, job: ActiveJob, reason: str) -> None:
        """A delivery of a cancelled attempt: report it cancelled without starting it."""
        fields = self._fields(job)
        job.phase = Phase.REPORTING
        now = utcnow()
        metrics.CANCELLATIONS.labels("not_started").inc()
        log.info(
            "cancelled attempt not started",
            extra={**fields, "action": "job_refused", "reason": reason},
        )
        await self._report(message, job, cancelled(reason), started_at=now, duration=None)

    async def _unserved(self, message: AbstractIncomingMessage, job: ActiveJob) -> None:
        """A type this worker does not serve (a deploy reached some workers of its queue
        first): hand the attempt back to the scheduler, which dispatches it where a live
        worker serves the type or lets it wait for one. Nothing runs, the job is not failed."""
        job.phase = Phase.REPORTING
        metrics.HANDED_BACK.inc()
        log.warning(
            "job type not served here; handed back",
            extra={**self._fields(job), "action": "job_handed_back"},
        )
        error = AttemptError(
            kind="retryable",
            error_class="UnservedJobType",
            message=f"worker {self.worker_id} does not serve {job.dispatch.job_type!r}",
        )
        await self._publish_result(job, ("unserved", None, error), started_at=utcnow())
        await self._ack(message, job)

    async def _granted(
        self, message: AbstractIncomingMessage, job: ActiveJob, ask: ClaimToAsk
    ) -> bool:
        """Claim the attempt; True: it runs here. Else the delivery is settled: acked on
        ``skip``, handed back when the claim could not be asked."""
        claim = await self._claimed(job, ask)
        if claim == "run":
            return True
        if claim == "skip":
            await self._ack(message, job)
        else:
            await self._hand_back(message, job, "claim not confirmed")
        return False

    async def _claimed(self, job: ActiveJob, ask: ClaimToAsk) -> Literal["run", "skip", "refused"]:
        """Ask the scheduler whether this redelivered attempt may run here, until it answers
        ``run`` (the attempt is recorded as running here) or ``skip``. Each ask is a
        confirmed ``JobRunning`` with ``redelivered``; one not answered in
        ``claim_answer_timeout`` is asked again; one the broker refuses ends in ``refused``
        (the delivery is handed back, bounded by the requeue limit)."""
        dispatch = job.dispatch
        fields = self._fields(job)
        since = ask.since if ask.since is not None or not ask.waits else utcnow()
        pause = self.settings.claim_retry_pause
        while True:
            waiter = self.claims.expect(job.key)
            request = JobRunning(
                job_id=dispatch.job_id,
                attempt=dispatch.attempt,
                worker_id=self.worker_id,
                started_at=utcnow(),
                trace_id=dispatch.trace_id,
                redelivered=True,
                claim_since=since,
            )
            try:
                if not await self._publish(RUNNING, request, fields):
                    return "refused"
                verdict = await asyncio.wait_for(waiter, self.settings.claim_answer_timeout)
            except TimeoutError:
                verdict = None
            finally:
                self.claims.forget(job.key, waiter)
            if verdict is not None and verdict.verdict != "wait":
                metrics.CLAIMS.labels(verdict.verdict).inc()
                log.info(
                    f"redelivered attempt: {verdict.verdict}",
                    extra={
                        **fields,
                        "action": f"claim_{verdict.verdict}",
                        "claim": ask.why,
                        "reason": verdict.reason,
                    },
                )
                return verdict.verdict
            metrics.CLAIMS.labels("wait" if verdict is not None else "unanswered").inc()
            if verdict is not None and verdict.retry_after is not None:
                pause = verdict.retry_after
            log.debug(
                "claim pending",
                extra={**fields, "action": "claim_wait", "reason": verdict and verdict.reason},
            )
            await asyncio.sleep(pause)

    async def _execute(
        self, message: AbstractIncomingMessage, job: ActiveJob, *, claimed: bool = False
    ) -> None:
        dispatch = job.dispatch
        fields = self._fields(job)
        job.started_at = started_at = utcnow()
        running = JobRunning(
            job_id=dispatch.job_id,
            attempt=dispatch.attempt,
            worker_id=self.worker_id,
            started_at=started_at,
            trace_id=dispatch.trace_id,
        )
        # A quick attempt reports only its result, which says when it started: JobRunning goes
        # out once the handler has run RUNNING_REPORT_DELAY. A claimed attempt is recorded as
        # running here already (the claim's answer).
        deferred = self.settings.running_report_delay > 0 and not claimed
        if claimed:
            job.running_confirmed = True
        elif not deferred and not await self._announce(running, job, fields):
            await self._hand_back(message, job, "JobRunning not confirmed")
            return
        job.phase = Phase.RUNNING
        metrics.JOBS_STARTED.labels(self.type_label(dispatch.job_type)).inc()
        log.info(
            "job started",
            extra={**fields, "action": "job_started", "redelivered": message.redelivered},
        )
        clock = time.perf_counter()
        if job.cancel_reason is not None:  # cancelled while JobRunning was being confirmed
            outcome = cancelled(job.cancel_reason)
        elif deferred:
            outcome = await self._run_announcing(job, running, fields)
        else:
            outcome = await self._run_handler(job, self._logger(job, fields))
        job.phase = Phase.REPORTING
        await self._report(
            message, job, outcome, started_at=started_at, duration=time.perf_counter() - clock
        )
        self.tally.record(outcome[0])

    async def _announce(self, running: JobRunning, job: ActiveJob, fields: dict[str, Any]) -> bool:
        """Publish ``JobRunning`` (confirmed): from then on the heartbeat renews its lease."""
        if not await self._publish(RUNNING, running, fields):
            return False
        job.running_confirmed = True
        return True

    async def _run_announcing(
        self, job: ActiveJob, running: JobRunning, fields: dict[str, Any]
    ) -> Outcome:
        """Run the handler; announce the attempt if it still runs after the delay. Should the
        broker refuse that publish, the attempt goes on: its result says when it started."""
        run = asyncio.create_task(self._run_handler(job, self._logger(job, fields)))
        try:
            done, _ = await asyncio.wait({run}, timeout=self.settings.running_report_delay)
            if not done and not await self._announce(running, job, fields):
                log.warning(
                    "JobRunning not confirmed; the attempt goes on",
                    extra={**fields, "action": "running_not_confirmed"},
                )
        except asyncio.CancelledError:  # shutdown: the handler stops with this task
            run.cancel()
            raise
        return await run

    async def _report(
        self,
        message: AbstractIncomingMessage,
        job: ActiveJob,
        outcome: Outcome,
        *,
        started_at: datetime,
        duration: float | None,
    ) -> None:
        """Publish the attempt's ``JobResult`` (confirmed), then ack the delivery."""
        fields = self._fields(job)
        label = self.type_label(job.dispatch.job_type)
        name, _, error = outcome
        if duration is not None:
            metrics.JOB_DURATION.labels(label).observe(duration)
        await self._publish_result(job, outcome, started_at=started_at)
        kind = error.kind if error is not None and name == "failed" else "none"
        metrics.JOBS_FINISHED.labels(label, name, kind).inc()
        log.info(
            "job finished",
            extra={
                **fields,
                "action": "job_finished",
                "outcome": name,
                "error_kind": kind,
                "error_class": error.error_class if error else None,
                "duration_ms": round(duration * 1000, 1) if duration is not None else None,
            },
        )
        await self._ack(message, job)

    async def _publish_result(
        self,
        job: ActiveJob,
        outcome: Outcome | tuple[Literal["unserved"], None, AttemptError],
        *,
        started_at: datetime,
    ) -> None:
        """Publish the attempt's ``JobResult``, kept and published again until the broker
        confirms it (never thrown away for another run)."""
        dispatch = job.dispatch
        name, result, error = outcome
        report = JobResult(
            job_id=dispatch.job_id,
            attempt=dispatch.attempt,
            worker_id=self.worker_id,
            outcome=name,
            result=result,
            error=job_error(error) if error is not None else None,
            started_at=started_at,
            finished_at=utcnow(),
            trace_id=dispatch.trace_id,
        )
        await self._publish_kept(report, self._fields(job))
        job.result_confirmed = True

    async def _run_handler(self, job: ActiveJob, logger: JobLogger) -> Outcome:
        dispatch = job.dispatch
        spec = self.registry.get(dispatch.job_type)
        if spec is None:  # handed back before it got here (_unserved); the registry is fixed
            raise RuntimeError(f"no handler for {dispatch.job_type!r}")
        try:
            payload = spec.payload_model.model_validate(dispatch.payload)
        except ValidationError as exc:
            return invalid_payload(exc)

        def progressed(percent: float, text: str | None) -> None:
            job.progress = (percent, text)

        ctx = JobContext(
            job_id=dispatch.job_id,
            attempt=dispatch.attempt,
            job_type=dispatch.job_type,
            worker_id=self.worker_id,
            trace_id=dispatch.trace_id,
            log=logger,
            cancel_signal=job.cancel_signal,
            progress_sink=progressed,
            resources=self.resources,
            deadline=time.monotonic() + dispatch.timeout_seconds,
            config=self.configs.get(dispatch.job_type),
            submitted_by=dispatch.submitted_by,
            project_id=dispatch.project_id,
            parents=parents_of(dispatch) if dispatch.parents else NO_PARENTS,
            submitter=self.submitter,
        )
        # The handler runs in its own task: a cancel request cancels that task only, so this
        # (delivery) task survives to report ``cancelled``; cancelling the delivery task
        # (shutdown) cancels the handler through the await and is told apart by
        # ``cancelling()``.
        handler: asyncio.Task[Any] = asyncio.create_task(
            self._call(spec, ctx, payload), name=f"handler:{dispatch.job_id}:{dispatch.attempt}"
        )
        job.handler = handler
        scope = asyncio.timeout(dispatch.timeout_seconds)
        soft = spec.soft_timeout_seconds
        soft_timer = (
            asyncio.get_running_loop().call_later(soft, job.cancel_signal.set)
            if soft is not None and soft < dispatch.timeout_seconds
            else None
        )
        try:
            async with scope:
                result = await handler
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is None or current.cancelling() > 0:
                raise  # the worker stops: the delivery is handed back unsettled
            if job.cancel_reason:
                logger.warning("attempt cancelled: %s", job.cancel_reason)
                return cancelled(job.cancel_reason)
            # Nobody asked: the handler raised CancelledError itself (or cancelled its own
            # task). A failure like any other exception, reported and acked; re-raised, it
            # left the delivery unacked until the channel closed.
            logger.error("the handler raised asyncio.CancelledError; no cancel was asked")
            return own_cancelled_error()
        except TimeoutError as exc:
            if scope.expired():
                logger.error("attempt timed out after %ss", dispatch.timeout_seconds)
                return timed_out(dispatch.timeout_seconds)
            return self._handler_failed(job, logger, exc)
        except Exception as exc:
            return self._handler_failed(job, logger, exc)
        finally:
            job.handler = None
            if soft_timer is not None:
                soft_timer.cancel()
            if not handler.done() or handler.cancelled():
                # Timed out, or the worker stops: a sync handler's thread runs on alone, told
                # to stop through ctx.cancelled.
                job.cancel_signal.set()
            if not handler.done():
                handler.cancel()
        return succeeded(spec, result)

    async def _call(self, spec: HandlerSpec, ctx: JobContext, payload: BaseModel) -> Any:
        """Run the handler: a coroutine on this loop, a sync function in the thread pool (with
        this task's log context; a cancel or timeout leaves the thread to finish alone)."""
        if spec.is_async:
            return await spec.run(ctx, payload)
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.sync_pool, partial(context.run, spec.run, ctx, payload)
        )

    def _handler_failed(self, job: ActiveJob, logger: JobLogger, exc: Exception) -> Outcome:
        if job.cancel_reason is not None:  # failed while being cancelled: it was cancelled
            return cancelled(job.cancel_reason)
        error = classify(exc)
        logger.warning(
            "handler failed: %s: %s",
            error.error_class,
            error.message,
            extra={"action": "handler_failed", "error_kind": error.kind},
            exc_info=not isinstance(exc, JobFailure),
        )
        return "failed", None, error

    async def _publish(
        self, routing_key: str, message: JobRunning | JobResult, fields: dict[str, Any]
    ) -> bool:
        try:
            if isinstance(message, JobResult):  # gathered with the results ready meanwhile
                await self.results.publish(message)
            else:
                await self.publisher.publish(routing_key, message)
        except asyncio.CancelledError:
            raise
        except Exception:
            metrics.PUBLISH_FAILURES.labels(message.type).inc()
            log.error(
                "publish not confirmed",
                extra={**fields, "action": "publish_failed", "routing_key": routing_key},
                exc_info=True,
            )
            return False
        return True

    async def _publish_kept(self, report: JobResult, fields: dict[str, Any]) -> None:
        """Publish ``report`` until the broker confirms it, pausing between tries (doubling
        from ``requeue_pause`` to ``result_retry_pause_max``): the outcome is computed, and
        handing the delivery back would run the handler again. A shutdown cancels this."""
        pause = self.settings.requeue_pause
        while not await self._publish(RESULTS, report, fields):
            metrics.RESULTS_KEPT.inc()
            log.warning(
                "result kept; published again once the broker confirms",
                extra={**fields, "action": "result_kept", "pause": pause},
            )
            await asyncio.sleep(pause)
            pause = min(max(pause * 2, 0.1), self.settings.result_retry_pause_max)

    async def _hand_back(self, message: AbstractIncomingMessage, job: ActiveJob, why: str) -> None:
        """Return the delivery to its queue without acking (the attempt runs again later), or
        past the requeue limit reject it to ``jobs.dead``."""
        await self.settler.settle(
            message, acks.Outcome.TRANSIENT, queue=job.queue, reason=why, fields=self._fields(job)
        )

    async def _return_unstarted(self, message: AbstractIncomingMessage, job: ActiveJob) -> None:
        """The worker went quiet before this delivery got a slot: give it back at once for
        another worker (it never started here, so no requeue is counted)."""
        metrics.HANDED_BACK_QUIET.inc()
        log.info(
            "worker quiet; delivery not started handed back",
            extra={**self._fields(job), "action": "quiet_handed_back"},
        )
        await self.settler.requeue_all([message], queue=job.queue)

    async def _ack(self, message: AbstractIncomingMessage, job: ActiveJob) -> None:
        await self.settler.settle(
            message, acks.Outcome.HANDLED, queue=job.queue, fields=self._fields(job)
        )

    async def _reject_poison(
        self, message: AbstractIncomingMessage, queue: str, exc: Exception
    ) -> None:
        metrics.POISON_MESSAGES.labels(queue).inc()
        reason = (
            "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        await self.settler.settle(message, acks.Outcome.POISON, queue=queue, reason=reason[:1000])


def parents_of(dispatch: JobDispatch) -> ParentResults:
    """A DAG child's parents' results as its handler reads them (``ctx.parent_results``)."""
    return ParentResults(
        Parent(job_id=p.job_id, ref=p.ref, result=p.result, omitted=p.omitted, size=p.size)
        for p in dispatch.parents
    )


@dataclass(frozen=True)
class ClaimToAsk:
    """Why a delivery is claimed before it runs, and the ``claim_since`` it asks with
    (``waits`` and no ``since``: when this worker first asks)."""

    why: str
    since: datetime | None = None
    waits: bool = True


def claim_to_ask(message: AbstractIncomingMessage, dispatch: JobDispatch) -> ClaimToAsk | None:
    """None: a first delivery of the first copy, fresh, runs without asking. Else the claim:
    a redelivery (another worker may still hold the attempt), a relay's copy (the first copy
    may run unasked until its ``fresh_until``), or a first delivery past its ``fresh_until``
    (a copy of it may exist; it need not wait for anyone)."""
    if message.redelivered:
        return ClaimToAsk("redelivered")
    headers = message.headers or {}
    window = _header_time(headers.get(FRESH_HEADER))
    if dispatch.resent or headers.get(COPY_HEADER):
        # The first copy ran unasked until its window's end: the copy asks as if dispatched
        # FRESH_DISPATCH before it, so the scheduler's lease of quiet covers that window too.
        since = dispatch.dispatched_at
        if window is not None:
            since = max(since, window - FRESH_DISPATCH)
        return ClaimToAsk("copy", since=since)
    fresh_until = window or dispatch.fresh_until
    if fresh_until is not None and utcnow() >= fresh_until:
        return ClaimToAsk("stale", waits=False)
    return None


def _header_time(value: Any) -> datetime | None:
    """An epoch-milliseconds header as a time (None: absent, or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
