"""What a blocked job becomes once its parents have all ended (pure).

A parent that has not ended (or is not recorded yet: its message is still on the way) keeps
the child ``blocked``. Once every parent ended: the child runs when every one succeeded (at
once, or ``scheduled`` until its ``run_at``), and is dead (``dependency_failed``) as soon as
one did not succeed, naming the first such parent."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from jobs_common.contracts import TERMINAL_STATUSES, JobStatus

S = JobStatus

# A parent in one of these has ended (the platform's terminal statuses, one definition).
ENDED = tuple(sorted(status.value for status in TERMINAL_STATUSES))


@dataclass(frozen=True)
class Release:
    action: Literal["dead", "scheduled", "queued"]
    reason: str


def after_parents_ended(
    parents: Sequence[tuple[uuid.UUID, str]], *, run_at: datetime | None, now: datetime
) -> Release:
    """The child's next status from its parents' ``(id, status)``, all of them ended."""
    for parent_id, status in parents:
        if status not in ENDED:
            raise ValueError(f"parent {parent_id} has not ended ({status})")
    failed = [(parent_id, status) for parent_id, status in parents if status != S.SUCCEEDED]
    if failed:
        parent_id, status = failed[0]
        return Release("dead", f"parent job {parent_id} ended {status}")
    if run_at is not None and run_at > now:
        return Release("scheduled", f"runs at {run_at.isoformat()}")
    return Release("queued", "parents succeeded")
