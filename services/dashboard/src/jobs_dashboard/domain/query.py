"""Listing queries: filters, sorting and paging, validated and independent of HTTP and SQL."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator

from jobs_common.auth import Identity
from jobs_common.contracts import JobStatus
from jobs_common.errors import ErrorDetail, Forbidden, ValidationFailed
from jobs_common.tenancy import OrgRole, Scope
from jobs_dashboard.domain.id_prefix import IdPrefix
from jobs_dashboard.domain.search import JobSearch

T = TypeVar("T")


def iso_only(value: Any) -> Any:
    """A date-time filter is ISO 8601 text: pydantic would read a number (``1e-9``, or a
    query string holding one) as seconds since the epoch, a value its schema refuses."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError("must be an ISO 8601 date-time, not a number")
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        raise ValueError("must be an ISO 8601 date-time, not a number")
    return value


IsoDateTime = Annotated[datetime, BeforeValidator(iso_only)]
"""A ``datetime`` filter given as ISO 8601 text only (its schema: a date-time string)."""

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


class SortField(StrEnum):
    CREATED_AT = "createdAt"
    UPDATED_AT = "updatedAt"
    PRIORITY = "priority"
    STATUS = "status"
    TYPE = "type"


class SortDirection(StrEnum):
    ASC = "asc"
    DESC = "desc"


# API sort field -> jobs table column. Every sort is tie-broken by ``id`` in the same direction.
SORT_COLUMNS: dict[SortField, str] = {
    SortField.CREATED_AT: "created_at",
    SortField.UPDATED_AT: "updated_at",
    SortField.PRIORITY: "priority",
    SortField.STATUS: "status",
    SortField.TYPE: "type",
}


def sort_column(field: SortField) -> str:
    return SORT_COLUMNS[field]


def sort_key(field: SortField) -> tuple[str, ...]:
    """The columns a listing is ordered by, all in the sort's direction: the sort column,
    then (unless it is a time already) the creation time, then the id; each such order has
    an index (``ix_jobs_created``, ``ix_jobs_updated``, ``ix_jobs_<column>_created``)."""
    column = SORT_COLUMNS[field]
    if column in ("created_at", "updated_at"):
        return (column, "id")
    return (column, "created_at", "id")


# pageNumber reaches this many rows into a listing (OFFSET); past them, nextCursor does.
MAX_OFFSET_ROWS = 10_000


def parse_statuses(values: Iterable[str] | None) -> tuple[JobStatus, ...]:
    """``status`` may repeat and each value may be a comma list; unknown values are refused."""
    found: list[JobStatus] = []
    bad: list[str] = []
    for value in values or ():
        for part in value.split(","):
            token = part.strip().lower()
            if not token:
                continue
            try:
                status = JobStatus(token)
            except ValueError:
                bad.append(part.strip())
                continue
            if status not in found:
                found.append(status)
    if bad:
        allowed = ", ".join(s.value for s in JobStatus)
        raise ValidationFailed(
            "request validation failed",
            details=[
                ErrorDetail(field="status", message=f"unknown status {b!r}; allowed: {allowed}")
                for b in bad
            ],
        )
    return tuple(found)


def as_utc(value: datetime | None) -> datetime | None:
    """A naive datetime is taken as UTC; an aware one is kept as it is."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class CreatedRange:
    """``created_from`` inclusive, ``created_to`` exclusive (half-open window)."""

    created_from: datetime | None = None
    created_to: datetime | None = None

    @classmethod
    def of(cls, created_from: datetime | None, created_to: datetime | None) -> CreatedRange:
        start, end = as_utc(created_from), as_utc(created_to)
        if start is not None and end is not None and start > end:
            raise ValidationFailed(
                "request validation failed",
                details=[ErrorDetail(field="createdTo", message="must not be before createdFrom")],
            )
        return cls(start, end)


Visibility = Scope
"""Which rows a caller may read: its scope for the viewer role (``Identity.scope``)."""


def visibility_for(identity: Identity, *, submitted_by: str | None = None) -> Visibility:
    """What the caller may read, optionally narrowed to one submitter's rows: within its
    projects anyone may narrow so; a caller nobody scoped sees only its own rows."""
    narrowed = submitted_by.strip() if submitted_by and submitted_by.strip() else None
    scope = identity.scope(OrgRole.VIEWER)
    if scope.owner is not None:
        if narrowed and narrowed.lower() != identity.email.lower():
            raise Forbidden("only admins may filter by submittedBy")
        return scope
    return Visibility(narrowed, scope.projects)


@dataclass(frozen=True)
class JobFilters:
    visibility: Visibility
    statuses: tuple[JobStatus, ...] = ()
    type: str | None = None
    priority: int | None = None
    created: CreatedRange = CreatedRange()
    schedule_id: IdPrefix | None = None  # the whole id, or 8 or more of its hex digits
    batch_id: IdPrefix | None = None
    search: JobSearch | None = None


@dataclass(frozen=True)
class PageRequest:
    page_number: int = 1
    page_size: int = DEFAULT_PAGE_SIZE

    def __post_init__(self) -> None:
        if self.page_number < 1:
            raise ValueError("page_number must be >= 1")
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be within 1..{MAX_PAGE_SIZE}")

    @property
    def offset(self) -> int:
        return (self.page_number - 1) * self.page_size

    @property
    def limit(self) -> int:
        return self.page_size


@dataclass(frozen=True)
class Cursor:
    """Where the next page of a listing starts: after the row with sort key ``after``
    (``sort_key``'s values), which was on page ``page_number - 1``. Opaque to clients."""

    sort_by: SortField
    direction: SortDirection
    after: tuple[Any, ...]
    page_number: int

    def encode(self) -> str:
        raw = json.dumps(
            [
                self.sort_by.value,
                self.direction.value,
                [_plain(v) for v in self.after],
                self.page_number,
            ],
            separators=(",", ":"),
        )
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            sort_by, direction = SortField(raw[0]), SortDirection(raw[1])
            columns = sort_key(sort_by)
            values = raw[2]
            if len(values) != len(columns) or not isinstance(raw[3], int) or raw[3] < 2:
                raise ValueError("wrong shape")
            after = tuple(_typed(c, v) for c, v in zip(columns, values, strict=True))
            return cls(sort_by, direction, after, raw[3])
        except (ValueError, TypeError, KeyError, IndexError, binascii.Error) as error:
            raise ValidationFailed(
                "request validation failed",
                details=[
                    ErrorDetail(field="cursor", message=f"not a cursor of this listing ({error})")
                ],
            ) from None


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _typed(column: str, value: Any) -> Any:
    if column in ("created_at", "updated_at"):
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError("naive time")
        return parsed
    if column == "id":
        return uuid.UUID(value)
    if column == "priority":
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError("priority is not a number")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{column} is not a string")
    return value


@dataclass(frozen=True)
class JobListQuery:
    filters: JobFilters
    page: PageRequest = PageRequest()
    sort_by: SortField = SortField.CREATED_AT
    direction: SortDirection = SortDirection.DESC
    # Set: the page after the cursor's row (keyset); None: ``page``'s offset.
    cursor: Cursor | None = None

    @classmethod
    def of(
        cls,
        filters: JobFilters,
        page: PageRequest,
        sort_by: SortField,
        direction: SortDirection,
        cursor: str | None,
    ) -> JobListQuery:
        """A cursor names its page and must come from a listing in the same order; without
        one, ``pageNumber`` may reach MAX_OFFSET_ROWS rows in."""
        if cursor is None:
            if page.offset >= MAX_OFFSET_ROWS:
                raise ValidationFailed(
                    "request validation failed",
                    details=[
                        ErrorDetail(
                            field="pageNumber",
                            message=f"pageNumber reaches the first {MAX_OFFSET_ROWS} jobs; "
                            "follow nextCursor past them",
                        )
                    ],
                )
            return cls(filters, page, sort_by, direction)
        decoded = Cursor.decode(cursor)
        if (decoded.sort_by, decoded.direction) != (sort_by, direction):
            raise ValidationFailed(
                "request validation failed",
                details=[ErrorDetail(field="cursor", message="the cursor is for another order")],
            )
        return cls(
            filters, PageRequest(decoded.page_number, page.page_size), sort_by, direction, decoded
        )
