"""Ready messages that die in the broker before a worker takes them (the TTL re-dispatch limit).

A ready message that expires unconsumed (its queue's TTL) or that a worker rejects comes back
through ``jobs.dead``. A backlog must not make a job dead, so the same attempt is dispatched
again, up to a limit (about a day of TTLs by default); past it the job is dead.
"""

from __future__ import annotations

from typing import Literal

DeadLetteredAction = Literal["redispatch", "dead"]


def after_dead_lettered(*, expired_count: int, limit: int) -> DeadLetteredAction:
    """``expired_count``: how many of the job's ready messages died before this one."""
    return "redispatch" if expired_count < limit else "dead"
