"""The control queue: scheduler -> every worker, on the ``jobs.events`` topic exchange.

Each worker declares its own exclusive, auto-delete queue ``jobs.control.{worker_id}`` bound
with ``control.#``, so every worker sees every control message. ``CancelAttempt``: remember it
(a delivery of that attempt is never started here) and cancel the attempt if it runs here.
``ClaimVerdict``: the scheduler's answer to a claim of a redelivered attempt, handed to the
delivery waiting for it (``app/claims.py``) when it is this worker's. ``WorkerControl``
(an admin's ``quiet`` or ``stop``, sent by the dashboard): handed to the runtime when it names
this worker. Other types and unparseable bodies are logged and dropped. Every message is
acked: a control message has no durable effect to wait for, and redelivering one cannot make
it more right.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import orjson
from aio_pika.abc import (
    AbstractChannel,
    AbstractIncomingMessage,
    AbstractQueue,
    AbstractRobustConnection,
)
from pydantic import ValidationError

from jobs_common.contracts import CancelAttempt, ClaimVerdict, WorkerControl
from jobs_common.rabbit import has_consumers, open_channel
from jobs_common.topology import CONTROL_PATTERN, EVENTS_EXCHANGE
from jobs_worker.adapters import metrics
from jobs_worker.app.active_jobs import ActiveJobs
from jobs_worker.app.claims import ClaimWaiters
from jobs_worker.domain.cancellations import CancelledSet

log = logging.getLogger(__name__)

CONTROL_PREFETCH = 100


def control_queue_name(worker_id: str) -> str:
    return f"jobs.control.{worker_id}"


class ControlConsumer:
    def __init__(
        self,
        *,
        worker_id: str,
        cancelled: CancelledSet,
        active: ActiveJobs,
        claims: ClaimWaiters | None = None,
        commands: Callable[[WorkerControl], None] | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.commands = commands  # the runtime's quiet / stop (None: ignored)
        self.cancelled = cancelled
        self.active = active
        self.claims = claims if claims is not None else ClaimWaiters(worker_id)
        self.channel: AbstractChannel | None = None
        self.queue: AbstractQueue | None = None
        self.consumer_tag: str | None = None

    async def start(self, connection: AbstractRobustConnection) -> None:
        self.channel = await open_channel(connection, prefetch=CONTROL_PREFETCH)
        events = await self.channel.get_exchange(EVENTS_EXCHANGE)
        # A client-chosen unique name rather than a server-named queue: the robust connection
        # re-declares the queue, its binding and its consumer by name after a reconnect.
        self.queue = await self.channel.declare_queue(
            control_queue_name(self.worker_id), exclusive=True, auto_delete=True
        )
        await self.queue.bind(events, routing_key=CONTROL_PATTERN)
        self.consumer_tag = await self.queue.consume(self._on_message)

    async def stop(self) -> None:
        if self.queue is not None and self.consumer_tag is not None:
            try:
                await self.queue.cancel(self.consumer_tag)
            except Exception:
                log.debug("control consumer cancel failed", exc_info=True)
            self.consumer_tag = None
        if self.channel is not None and not self.channel.is_closed:
            try:
                await self.channel.close()
            except Exception:
                log.debug("control channel close failed", exc_info=True)

    async def ready(self) -> bool:
        if self.queue is None or self.consumer_tag is None or self.channel is None:
            return False
        if self.channel.is_closed:
            return False
        return await has_consumers(self.queue)

    async def _on_message(self, message: AbstractIncomingMessage) -> None:
        try:
            self.handle(message.body)
        except Exception:
            log.exception("control message failed", extra={"action": "control_failed"})
        finally:
            try:
                await message.ack()
            except Exception:
                log.debug("control ack failed", exc_info=True)

    def handle(self, body: bytes) -> None:
        """Apply one control message body."""
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            self._invalid(f"not JSON: {exc}")
            return
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "control.claim":
            self._claim_answered(data)
            return
        if kind == "control.worker":
            self._commanded(data)
            return
        if kind != "control.cancel":
            metrics.CONTROL_MESSAGES.labels("other").inc()
            log.info(
                "control message ignored",
                extra={"action": "control_ignored", "message_type": str(kind)[:100]},
            )
            return
        try:
            cancel = CancelAttempt.model_validate(data)
        except ValidationError as exc:
            self._invalid(str(exc))
            return
        metrics.CONTROL_MESSAGES.labels(cancel.type).inc()
        self.apply(cancel)

    def _claim_answered(self, data: dict[str, object]) -> None:
        if data.get("worker_id") != self.worker_id:
            return  # another worker's answer: every worker sees every control message
        try:
            verdict = ClaimVerdict.model_validate(data)
        except ValidationError as exc:
            self._invalid(str(exc))
            return
        metrics.CONTROL_MESSAGES.labels(verdict.type).inc()
        if not self.claims.deliver(verdict):
            log.debug(
                "claim answer with no one waiting",
                extra={"action": "claim_unawaited", "job_id": str(verdict.job_id)},
            )

    def _commanded(self, data: dict[str, object]) -> None:
        if data.get("worker_id") != self.worker_id:
            return  # meant for another worker: every worker sees every control message
        try:
            command = WorkerControl.model_validate(data)
        except ValidationError as exc:
            self._invalid(str(exc))
            return
        metrics.CONTROL_MESSAGES.labels(command.type).inc()
        log.info(
            f"worker {command.command} requested",
            extra={
                "action": f"worker_{command.command}_requested",
                "worker_id": self.worker_id,
                "requested_by": command.requested_by,
                "trace_id": command.trace_id,
            },
        )
        if self.commands is not None:
            self.commands(command)

    def apply(self, cancel: CancelAttempt) -> None:
        if cancel.worker_id is not None and cancel.worker_id != self.worker_id:
            return  # meant for the worker that lost the attempt, not for its new holder
        self.cancelled.add(cancel.job_id, cancel.attempt, cancel.reason)
        stopped = self.active.cancel_matching(cancel.job_id, cancel.attempt, reason=cancel.reason)
        for job_id, attempt in stopped:
            metrics.CANCELLATIONS.labels("running").inc()
            log.info(
                "cancelling running attempt",
                extra={
                    "action": "cancel_running",
                    "job_id": str(job_id),
                    "attempt": attempt,
                    "reason": cancel.reason,
                    "worker_id": self.worker_id,
                    "trace_id": cancel.trace_id,
                },
            )
        if not stopped:
            log.debug(
                "cancel remembered",
                extra={
                    "action": "cancel_remembered",
                    "job_id": str(cancel.job_id),
                    "attempt": cancel.attempt,
                    "reason": cancel.reason,
                },
            )

    def _invalid(self, reason: str) -> None:
        metrics.CONTROL_MESSAGES.labels("invalid").inc()
        log.warning(
            "unparseable control message dropped",
            extra={"action": "control_invalid", "reason": reason[:1000]},
        )
