"""Dead letters (pure): filters, request and answer models. What a command may do is the
scheduler's rule (``jobs_scheduler.domain.dead_letters``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from jobs_common.api_models import CamelModel, Page
from jobs_common.contracts import JobStatus
from jobs_common.dead_letter_commands import MAX_REASON, BulkAction
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_dashboard.domain.query import CreatedRange, IsoDateTime, Visibility

SAMPLE_SIZE = 10
MAX_SELECTOR_IDS = 10_000


class DeadLetterState(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"
    ALL = "all"


@dataclass(frozen=True)
class DeadLetterFilters:
    """Which dead letters: the visibility is the owner of the dead job (jobs.submitted_by)."""

    visibility: Visibility
    state: DeadLetterState = DeadLetterState.OPEN
    reason: str | None = None
    job_type: str | None = None
    fingerprint: str | None = None
    created: CreatedRange = field(default_factory=CreatedRange)
    ids: tuple[uuid.UUID, ...] = ()
    job_status: JobStatus | None = None
    # Read by a plain user: fingerprints are grouped and matched as the user reads them
    # (domain/disclosure.py), without the worker a lost lease's error names.
    for_owner: bool = False


class DeadLetterItem(CamelModel):
    id: uuid.UUID
    job_id: uuid.UUID
    project_id: uuid.UUID = Field(description="The dead job's project (docs/tenancy.md).")
    job_type: str
    job_status: JobStatus
    attempt: int
    reason: str
    last_error: str | None
    last_error_class: str | None
    fingerprint: str
    payload_snapshot: dict[str, Any]
    created_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    resolution: str | None


class DeadLetterPage(Page[DeadLetterItem]):
    pass


class DeadLetterGroup(CamelModel):
    fingerprint: str
    count: int
    reasons: list[str]
    sample_error: str | None = Field(description="The newest last error of the group.")
    first_at: datetime
    last_at: datetime


class DeadLetterGroups(CamelModel):
    items: list[DeadLetterGroup]


class RequeueBody(CamelModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=MAX_REASON)
    payload: dict[str, Any] | None = Field(
        default=None, description="Replaces the job's payload; validated like a submission."
    )


class DiscardBody(CamelModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(default=None, max_length=MAX_REASON)


class BulkSelector(CamelModel):
    model_config = ConfigDict(extra="forbid")

    fingerprint: str | None = Field(default=None, max_length=2_000)
    reason: str | None = Field(default=None, max_length=200)
    job_type: str | None = Field(default=None, max_length=200)
    created_from: IsoDateTime | None = None
    created_to: IsoDateTime | None = None
    ids: list[uuid.UUID] | None = Field(default=None, max_length=MAX_SELECTOR_IDS)

    @model_validator(mode="after")
    def _something_selected(self) -> BulkSelector:
        if not any(
            value is not None
            for value in (
                self.fingerprint,
                self.reason,
                self.job_type,
                self.created_from,
                self.created_to,
                self.ids,
            )
        ):
            raise ValueError(
                "select by at least one of fingerprint, reason, jobType, "
                "createdFrom, createdTo, ids"
            )
        return self

    def filters(
        self, visibility: Visibility, *, action: BulkAction, for_owner: bool = False
    ) -> DeadLetterFilters:
        """Open letters matching the selector; a requeue also needs the job to be dead."""
        try:
            created = CreatedRange.of(self.created_from, self.created_to)
        except ValidationFailed as exc:
            raise ValidationFailed(
                exc.message,
                details=[
                    ErrorDetail(field=f"selector.{d.field}", message=d.message) for d in exc.details
                ],
            ) from exc
        return DeadLetterFilters(
            visibility=visibility,
            state=DeadLetterState.OPEN,
            reason=self.reason,
            job_type=self.job_type,
            fingerprint=self.fingerprint,
            created=created,
            ids=tuple(self.ids or ()),
            job_status=JobStatus.DEAD if action is BulkAction.REQUEUE else None,
            for_owner=for_owner,
        )

    def as_json(self) -> dict[str, Any]:
        """The selector as recorded in the audit log (camelCase, only what was given)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class BulkRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")

    action: BulkAction
    dry_run: bool = False
    reason: str | None = Field(default=None, max_length=MAX_REASON)
    selector: BulkSelector


class BulkResult(CamelModel):
    action: BulkAction
    dry_run: bool
    count: int = Field(description="Letters acted on (dry run: that would be), at most the limit.")
    matching: int = Field(description="Open letters matching the selector, before the limit.")
    sample: list[DeadLetterItem] = Field(description="Dry run: the first 10; otherwise empty.")


class RequeueAccepted(CamelModel):
    dead_letter_id: uuid.UUID
    job_id: uuid.UUID
    status: Literal["requeue_requested"] = "requeue_requested"


class DeadLetterAction(CamelModel):
    id: int
    action: str
    actor: str
    reason: str | None
    dead_letter_id: uuid.UUID | None
    job_id: uuid.UUID | None
    selector: dict[str, Any] | None
    affected: int
    at: datetime


class DeadLetterActionPage(Page[DeadLetterAction]):
    pass
