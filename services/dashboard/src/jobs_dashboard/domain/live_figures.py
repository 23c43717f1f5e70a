"""The overview's figures of now (docs/dashboard.md, "The overview's figures of now"): the
unfinished jobs by status and, for admins, the live workers' busy and total slots, read
together so that the overview's running count and the Workers page's in-flight totals come
from the same rows at the same moment."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from jobs_common.api_models import CamelModel
from jobs_dashboard.domain.workers import WorkerList


class WorkerSlots(CamelModel):
    live: int = Field(description="Workers the Workers page shows that are not judged dead.")
    busy_slots: int = Field(description="Their jobs in flight, as their heartbeats report them.")
    slots: int = Field(description="Their concurrency, summed.")


class LiveFigures(CamelModel):
    at: datetime = Field(description="The database's clock when the figures were read.")
    unfinished_by_status: dict[str, int] = Field(
        description="The caller's unfinished jobs by status (pending, blocked, scheduled, "
        "queued, running; a status with none is 0), counted now, not from the rollups."
    )
    workers: WorkerSlots | None = Field(
        description="Admins: the workers as the Workers page lists them; null for others."
    )


def worker_slots(listing: WorkerList) -> WorkerSlots:
    """The Workers page's totals: every worker it shows that is not dead."""
    shown = [w for w in listing.items if w.status != "dead"]
    return WorkerSlots(
        live=len(shown),
        busy_slots=sum(w.active_jobs for w in shown),
        slots=sum(w.concurrency for w in shown),
    )
