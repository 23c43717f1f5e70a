"""A project's queues between the dashboard and the scheduler, which owns ``queues``
(docs/flow-control.md).

The dashboard checks a request against the public API's schema and the caller's role, then
sends the scheduler's internal API (``/internal/v1/queues``) a :class:`QueueCreate`, a
:class:`QueuePatch`, a pause, a resume or a delete with the caller's identity headers. The
scheduler decides what depends on the rows (a name taken: 409; unfinished jobs left: 409; not
the caller's or gone: 404) in the transaction that writes them, and answers with a
:class:`QueueView`."""

from __future__ import annotations

import uuid
from collections.abc import Set
from datetime import datetime
from typing import Literal, Self

from pydantic import ConfigDict, Field, model_validator

from jobs_common.api_models import CamelModel, Page
from jobs_common.auth import Identity
from jobs_common.contracts import QUEUE_NAME_PATTERN, JobStatus
from jobs_common.tenancy import OrgRole, Scope, personal_project_id

QUEUES_PATH = "/internal/v1/queues"
MAX_CONCURRENCY = 100_000
MAX_RATE = 100_000
PER_SECONDS = {"second": 1, "minute": 60}


class RateLimit(CamelModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(strict=True, ge=1, le=MAX_RATE, description="Jobs started per period.")
    per: Literal["second", "minute"]

    @property
    def per_seconds(self) -> int:
        return PER_SECONDS[self.per]


class ConcurrencyKey(CamelModel):
    model_config = ConfigDict(extra="forbid")

    field: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
        description="A top-level field of the jobs' payload, as `customerId`.",
    )
    limit: int = Field(
        strict=True, ge=1, le=MAX_CONCURRENCY, description="Running jobs per value at most."
    )


class QueueSettings(CamelModel):
    """What a queue's admins set; every field optional. In a PATCH a field left out stays as
    it is and one given as null is cleared."""

    model_config = ConfigDict(extra="forbid")

    max_concurrency: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        le=MAX_CONCURRENCY,
        description="Running jobs of the queue at most, across every worker; null: no limit.",
    )
    rate_limit: RateLimit | None = Field(
        default=None, description="Jobs started per second or minute at most; null: none."
    )
    concurrency_key: ConcurrencyKey | None = Field(
        default=None,
        description="At most `limit` running jobs per value of a payload field; null: none.",
    )
    paused: bool | None = Field(
        default=None, strict=True, description="Create paused (create only)."
    )
    default_priority: int | None = Field(default=None, strict=True, ge=1, le=3)
    default_timeout_seconds: int | None = Field(default=None, strict=True, ge=1, le=1700)
    default_retry_policy: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$",
        description="One of the project's (or the shared) named retry policies.",
    )

    def columns(self, fields: Set[str]) -> dict[str, object]:
        """``fields`` (pause aside) by column: a rate limit is two columns, a key two."""
        values: dict[str, object] = {}
        for name in (
            "max_concurrency",
            "default_priority",
            "default_timeout_seconds",
            "default_retry_policy",
        ):
            if name in fields:
                values[name] = getattr(self, name)
        if "rate_limit" in fields:
            rate = self.rate_limit
            values["rate_limit"] = rate.limit if rate else None
            values["rate_per_seconds"] = rate.per_seconds if rate else None
            values["rate_tokens"] = None  # a new rate starts with a full bucket
            values["rate_refilled_at"] = None
        if "concurrency_key" in fields:
            key = self.concurrency_key
            values["concurrency_key"] = key.field if key else None
            values["concurrency_key_limit"] = key.limit if key else None
        return values


class QueueCreate(QueueSettings):
    name: str = Field(
        pattern=QUEUE_NAME_PATTERN,
        description="1-63 of a-z, 0-9, '-', '_', starting with a letter: the lane the "
        "handlers of the jobs name (`@handler(queue=...)`).",
    )


class QueuePatch(QueueSettings):
    @model_validator(mode="after")
    def _not_paused(self) -> Self:
        if "paused" in self.model_fields_set:
            raise ValueError("pause or resume a queue with its /pause and /resume routes")
        return self

    def changes(self) -> dict[str, object]:
        """The given fields by column (:meth:`QueueSettings.columns`)."""
        return self.columns(self.model_fields_set)


class QueueDepthEntry(CamelModel):
    """How many of a queue's unfinished jobs are in one status with one priority."""

    status: JobStatus = Field(description="An unfinished status.")
    priority: int = Field(ge=1, le=3, description="1 low, 2 medium, 3 high.")
    count: int = Field(ge=1)


class QueueView(CamelModel):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    max_concurrency: int | None
    rate_limit: RateLimit | None
    concurrency_key: ConcurrencyKey | None
    paused: bool
    paused_at: datetime | None
    paused_by: str | None
    default_priority: int | None
    default_timeout_seconds: int | None
    default_retry_policy: str | None
    created_by: str
    created_at: datetime
    updated_at: datetime
    waiting: int = Field(description="Unfinished jobs of the queue not running now.")
    running: int = Field(description="Jobs of the queue running now.")
    depth: list[QueueDepthEntry] = Field(
        default_factory=list,
        description="Its unfinished jobs now by status and priority (only the pairs with "
        "some), in the order of the job lifecycle and high priority first; `waiting` and "
        "`running` are their sums.",
    )
    oldest_queued_at: datetime | None = Field(
        description="When the oldest of its jobs ready to run (queued) was submitted; null: "
        "none queued.",
    )
    oldest_age_seconds: float | None = Field(
        description="Its age now (the database clock); null: none queued."
    )


class QueuePage(Page[QueueView]):
    pass


def queue_project(identity: Identity) -> uuid.UUID:
    """Where a create request makes its queue: the request's project (``projectId`` or
    ``X-Project``, else the caller's default), which takes an admin of it (403 below, 404
    when not the caller's)."""
    project = identity.project_id or str(personal_project_id(identity.email))
    identity.require(project, OrgRole.ADMIN, to="manage queues", missing="project not found")
    return uuid.UUID(project)


def queue_projects(scope: Scope) -> frozenset[uuid.UUID] | None:
    """The projects whose queues ``scope`` reaches (None: every one). Queues have no owner:
    a caller scoped by its own rows reaches its personal project's."""
    if scope.owner is None:
        return scope.projects
    own = {personal_project_id(scope.owner)}
    return frozenset(own if scope.projects is None else own & scope.projects)
