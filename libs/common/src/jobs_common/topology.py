"""The one RabbitMQ topology: every exchange, queue, routing key and queue argument.

Every service declares the topology through :func:`declare_topology`, and
``infra/rabbitmq/definitions.json`` is generated from :func:`definitions` (a test keeps
the two identical), so queue arguments can never drift between declarers.

Queue type: classic, decided here once and measured. ``scripts/bench_queue_type.py`` (20,000
persistent 1 KiB messages, publisher confirms in flight, prefetch 20) on the 2-core test machine
with RabbitMQ 3.10 gave classic 7,900-8,700 msg/s published and 9,400-9,600 consumed, quorum
10,600-10,800 and 9,800-10,400: throughput does not decide it. Classic stays because the
platform runs one broker node (dev, test, compose), where quorum replication adds nothing, and
a message lost between a ready queue and ``jobs.dead`` (both types dead-letter at most once by
default) is re-dispatched by the scheduler's reconciler either way. A clustered deployment
moves to quorum queues under new names (RabbitMQ refuses to redeclare a queue with other
arguments) with ``x-delivery-limit`` set explicitly: 3.x has none, 4.x defaults it to 20.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final

import aio_pika
from aio_pika.abc import AbstractChannel, AbstractExchange, AbstractQueue

from jobs_common.contracts import QUEUE_NAME_PATTERN

JOBS_EXCHANGE: Final = "jobs.exchange"
DEAD_LETTER_EXCHANGE: Final = "jobs.dlx"
EVENTS_EXCHANGE: Final = "jobs.events"

SUBMITTED: Final = "jobs.submitted"
READY_LOW: Final = "jobs.ready.low"
READY_MEDIUM: Final = "jobs.ready.medium"
READY_HIGH: Final = "jobs.ready.high"
RUNNING: Final = "jobs.running"
HEARTBEAT: Final = "jobs.heartbeat"
RESULTS: Final = "jobs.results"
RETRY: Final = "jobs.retry"
CANCEL: Final = "jobs.cancel"
LOGS: Final = "jobs.logs"
DEAD: Final = "jobs.dead"
TYPES: Final = "jobs.types"  # WorkerTypes: the job types workers serve -> the type registry
SCHEDULES: Final = "jobs.schedules"  # WorkerSchedules: schedules declared in code -> scheduler

# Routing keys on jobs.events: scheduler -> workers control, and live UI events.
CONTROL_CANCEL: Final = "control.cancel"
CONTROL_CLAIM: Final = "control.claim"  # ClaimVerdict: the answer to a redelivered attempt
CONTROL_WORKER: Final = "control.worker"  # WorkerControl: an admin's quiet or stop
CONTROL_PATTERN: Final = "control.#"
JOB_EVENT_PATTERN: Final = "job.#"
JOB_CHANGES: Final = "job.changes"  # JobChanges: status changes, for live views
JOB_LOGS_LIVE: Final = "job.logs"  # JobLogTail: stored log lines, for live views

READY_MESSAGE_TTL_MS: Final = 60_000
QUEUE_TYPE: Final = "classic"


class Priority(IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3


READY_QUEUE_BY_PRIORITY: Final[dict[Priority, str]] = {
    Priority.LOW: READY_LOW,
    Priority.MEDIUM: READY_MEDIUM,
    Priority.HIGH: READY_HIGH,
}
READY_QUEUES: Final = (READY_HIGH, READY_MEDIUM, READY_LOW)
DEFAULT_PREFETCH: Final[dict[str, int]] = {READY_LOW: 5, READY_MEDIUM: 10, READY_HIGH: 20}

ALL_QUEUES: Final = (
    SUBMITTED,
    READY_LOW,
    READY_MEDIUM,
    READY_HIGH,
    RUNNING,
    HEARTBEAT,
    RESULTS,
    RETRY,
    CANCEL,
    LOGS,
    DEAD,
    TYPES,
    SCHEDULES,
)


# Named queues (``@handler(queue=...)``): "default" is the three queues above; any other name
# has three of its own, jobs.ready.<name>.<high|medium|low>, declared at run time by whoever
# needs them first (the workers that serve it, the relay that dispatches to it).
DEFAULT_QUEUE: Final = "default"
QUEUE_NAME = re.compile(QUEUE_NAME_PATTERN)
_READY_PREFIX = "jobs.ready."
_PRIORITY_NAMES: Final[dict[Priority, str]] = {
    Priority.LOW: "low",
    Priority.MEDIUM: "medium",
    Priority.HIGH: "high",
}


def ready_queue_for(priority: int, queue: str = DEFAULT_QUEUE) -> str:
    """The ready queue (and routing key) for a job priority 1..3 on a named queue."""
    if queue == DEFAULT_QUEUE:
        return READY_QUEUE_BY_PRIORITY[Priority(priority)]
    return f"{_READY_PREFIX}{queue}.{_PRIORITY_NAMES[Priority(priority)]}"


def ready_queues_of(queue: str) -> tuple[str, ...]:
    """A named queue's ready queues, highest priority first (as READY_QUEUES)."""
    return tuple(ready_queue_for(priority, queue) for priority in sorted(Priority, reverse=True))


_LANE_PREFIX = "jobs.lane."


def lane_for(job_type: str) -> str:
    """A job type's lane (and routing key): a ready queue only the workers serving the type
    consume, for jobs of a type that some workers of its queue do not serve (a deploy that
    reached some of them first). One per type, no priorities: the exception, not the path."""
    return f"{_LANE_PREFIX}{job_type}"


def waiting_reason(job_type: str) -> str:
    """Why a job of ``job_type`` is not dispatched: the scheduler's record of a waiting job
    (``jobs.waiting_reason``) and the type listing's (``GET /api/job-types``) say it alike."""
    return f"no live worker serves {job_type!r}"


def is_lane(name: str) -> bool:
    return lane_type(name) is not None


def lane_type(name: str) -> str | None:
    """The job type whose lane ``name`` is (None: not a lane)."""
    job_type = name.removeprefix(_LANE_PREFIX)
    return job_type if job_type and job_type != name else None


def is_ready_queue(name: str) -> bool:
    """One of the default ready queues, of a named queue's, or a type's lane."""
    if name in READY_QUEUES or is_lane(name):
        return True
    queue, _, priority = name.removeprefix(_READY_PREFIX).rpartition(".")
    return (
        name.startswith(_READY_PREFIX)
        and priority in _PRIORITY_NAMES.values()
        and bool(QUEUE_NAME.match(queue))
        and queue != DEFAULT_QUEUE
    )


def named_queue_of(name: str) -> str | None:
    """The named queue a ready queue belongs to (None for the default ones and others)."""
    if name in READY_QUEUES or is_lane(name) or not is_ready_queue(name):
        return None
    return name.removeprefix(_READY_PREFIX).rpartition(".")[0]


def queue_arguments(queue: str) -> dict[str, Any]:
    """Arguments of ``queue``: the single source for every declaration of it."""
    arguments: dict[str, Any] = {"x-queue-type": QUEUE_TYPE}
    if is_ready_queue(queue):
        arguments |= {
            "x-message-ttl": READY_MESSAGE_TTL_MS,
            "x-dead-letter-exchange": DEAD_LETTER_EXCHANGE,
            "x-dead-letter-routing-key": DEAD,
        }
    return arguments


@dataclass(frozen=True)
class Binding:
    exchange: str
    queue: str
    routing_key: str


def bindings() -> list[Binding]:
    """Every queue is bound on jobs.exchange by its own name; jobs.dead also on jobs.dlx."""
    result = [Binding(JOBS_EXCHANGE, queue, queue) for queue in ALL_QUEUES]
    result.append(Binding(DEAD_LETTER_EXCHANGE, DEAD, DEAD))
    return result


@dataclass
class Topology:
    """Declared exchanges and queues of one channel."""

    jobs: AbstractExchange
    dlx: AbstractExchange
    events: AbstractExchange
    queues: dict[str, AbstractQueue] = field(default_factory=dict)


async def declare_topology(channel: AbstractChannel) -> Topology:
    """Declare (idempotently) all exchanges, queues and bindings on ``channel``."""
    jobs = await channel.declare_exchange(JOBS_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True)
    dlx = await channel.declare_exchange(
        DEAD_LETTER_EXCHANGE, aio_pika.ExchangeType.DIRECT, durable=True
    )
    events = await channel.declare_exchange(
        EVENTS_EXCHANGE, aio_pika.ExchangeType.TOPIC, durable=True
    )
    topology = Topology(jobs=jobs, dlx=dlx, events=events)
    for name in ALL_QUEUES:
        topology.queues[name] = await channel.declare_queue(
            name, durable=True, arguments=queue_arguments(name)
        )
    by_name = {JOBS_EXCHANGE: jobs, DEAD_LETTER_EXCHANGE: dlx}
    for binding in bindings():
        await topology.queues[binding.queue].bind(
            by_name[binding.exchange], routing_key=binding.routing_key
        )
    return topology


async def declare_named_queue(channel: AbstractChannel, queue: str) -> dict[str, AbstractQueue]:
    """Declare (idempotently) the ready queues of a named queue on ``channel``, each bound on
    jobs.exchange by its own name, with the ready queues' arguments (TTL, dead-lettering)."""
    if not QUEUE_NAME.match(queue):
        raise ValueError(f"{queue!r} is not a queue name")
    jobs = await channel.get_exchange(JOBS_EXCHANGE)
    declared = {}
    for name in ready_queues_of(queue):
        declared[name] = await channel.declare_queue(
            name, durable=True, arguments=queue_arguments(name)
        )
        await declared[name].bind(jobs, routing_key=name)
    return declared


async def declare_lane(channel: AbstractChannel, job_type: str) -> AbstractQueue:
    """Declare (idempotently) ``job_type``'s lane, bound on jobs.exchange by its own name, with
    the ready queues' arguments (TTL, dead-lettering)."""
    name = lane_for(job_type)
    jobs = await channel.get_exchange(JOBS_EXCHANGE)
    queue = await channel.declare_queue(name, durable=True, arguments=queue_arguments(name))
    await queue.bind(jobs, routing_key=name)
    return queue


def definitions(vhost: str = "/") -> dict[str, Any]:
    """The topology as a RabbitMQ management definitions document."""
    exchanges = [
        (JOBS_EXCHANGE, "direct"),
        (DEAD_LETTER_EXCHANGE, "direct"),
        (EVENTS_EXCHANGE, "topic"),
    ]
    return {
        "vhosts": [{"name": vhost}],
        "exchanges": [
            {
                "name": name,
                "vhost": vhost,
                "type": kind,
                "durable": True,
                "auto_delete": False,
                "internal": False,
                "arguments": {},
            }
            for name, kind in exchanges
        ],
        "queues": [
            {
                "name": name,
                "vhost": vhost,
                "durable": True,
                "auto_delete": False,
                "arguments": queue_arguments(name),
            }
            for name in ALL_QUEUES
        ],
        "bindings": [
            {
                "source": binding.exchange,
                "vhost": vhost,
                "destination": binding.queue,
                "destination_type": "queue",
                "routing_key": binding.routing_key,
                "arguments": {},
            }
            for binding in bindings()
        ],
    }
