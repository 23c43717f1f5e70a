"""Dead-letter commands between the dashboard and the scheduler, which owns ``dead_letters``
and their audit log ``dead_letter_actions``.

The dashboard reads: it finds the letters a user means (one id, or a bulk selector's matches,
oldest first, up to its bulk limit) and checks an edited payload against the job's type. It
sends the scheduler's internal API (``/internal/v1/dead-letters``, docs/architecture.md) the
letter ids with the caller's identity headers. The scheduler decides under row locks, in the
transaction that writes the rows: a letter not the caller's (a user acts on the letters of
their own jobs, an admin on all) or gone is 404, an already resolved letter or a job that is
no longer dead is 409; it requeues or discards, writes the audit rows and answers."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict, Field

from jobs_common.api_models import CamelModel

DEAD_LETTERS_PATH = "/internal/v1/dead-letters"
MAX_REASON = 1_000
MAX_BULK_IDS = 100_000

# ``dead_letter_actions.action`` and ``dead_letters.resolution`` values.
ACTION_REQUEUE = "requeue"
ACTION_DISCARD = "discard"
RESOLUTION_REQUEUED = "requeued"
RESOLUTION_DISCARDED = "discarded"


class BulkAction(StrEnum):
    REQUEUE = "requeue"
    DISCARD = "discard"


ACTION_BULK = {BulkAction.REQUEUE: "bulk_requeue", BulkAction.DISCARD: "bulk_discard"}


class Command(CamelModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=MAX_REASON)


class RequeueCommand(Command):
    payload: dict[str, Any] | None = Field(
        default=None, description="Replaces the job's payload; checked by the dashboard."
    )


class DiscardCommand(Command):
    pass


class BulkCommand(Command):
    action: BulkAction
    ids: list[uuid.UUID] = Field(
        max_length=MAX_BULK_IDS, description="The selector's matches, oldest first."
    )
    selector: dict[str, Any] = Field(description="As the user gave it, for the audit log.")
    rate_per_second: float = Field(
        gt=0, description="A requeue's pace: the i-th runs not before now + i / rate."
    )


class Resolved(CamelModel):
    """A letter as the command left it."""

    dead_letter_id: uuid.UUID
    job_id: uuid.UUID
    resolved_at: datetime
    resolved_by: str
    resolution: str


class BulkDone(CamelModel):
    count: int = Field(description="Letters acted on; the others were resolved meanwhile.")
