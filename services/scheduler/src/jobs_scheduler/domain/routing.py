"""Where a ready message goes: only where a live worker serves its job's type.

Workers list, in every heartbeat, the ready queues they consume and the job types they serve.
A dispatch is routed by the live ones (heartbeat within a lease, not stopping, not quiet):

- when every live consumer of the job's ready queue serves its type (the usual case), to that
  ready queue, as written;
- when only some do (a rolling deploy that adds or removes a type reached some workers of a
  shared queue first), to the type's lane (``jobs.lane.<type>``), which only the workers
  serving the type consume: no worker receives a job it cannot run;
- when none does, nowhere: the job waits, ``queued`` with the reason, and is dispatched as
  soon as a worker serving the type is live (``app/waiting.py``).

A worker that predates the ``types`` field lists none and is taken to serve every type.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from jobs_common.topology import is_lane, lane_for, waiting_reason


@dataclass(frozen=True)
class LiveWorker:
    worker_id: str
    queues: frozenset[str]
    types: frozenset[str] | None  # None: a worker that does not say (serves all)

    def serves(self, job_type: str) -> bool:
        return self.types is None or job_type in self.types


@dataclass(frozen=True)
class Route:
    routing_key: str | None  # None: the job waits
    reason: str = ""


@dataclass(frozen=True)
class Wait:
    """A dispatch no live worker can take: its job waits."""

    job_id: uuid.UUID
    attempt: int
    reason: str
    # No message of the attempt was published before this one, which is held back: when a
    # worker arrives it goes out as a first delivery, not as a copy to claim (a lease later).
    unsent: bool = False


def route(job_type: str, routing_key: str, live: Iterable[LiveWorker]) -> Route:
    """Where a ready message of ``job_type`` written for ``routing_key`` (its queue, or its
    type's lane after a hand-back) goes now."""
    workers = list(live)
    capable = [w for w in workers if w.serves(job_type)]
    if not capable:
        return Route(None, waiting_reason(job_type))
    if is_lane(routing_key):
        return Route(routing_key)
    consumers = [w for w in workers if routing_key in w.queues]
    if consumers and all(w.serves(job_type) for w in consumers):
        return Route(routing_key)
    return Route(lane_for(job_type), "some workers of its queue do not serve it")
