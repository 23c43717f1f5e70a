"""Query parameter parsing, sort mapping and paging math (no I/O)."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from jobs_common.api_models import total_pages
from jobs_common.auth import Identity
from jobs_common.contracts import JobStatus
from jobs_common.errors import Forbidden, ValidationFailed
from jobs_common.jobstore import jobs
from jobs_dashboard.domain.query import (
    SORT_COLUMNS,
    CreatedRange,
    PageRequest,
    SortField,
    Visibility,
    as_utc,
    parse_statuses,
    sort_column,
    visibility_for,
)

pytestmark = pytest.mark.unit

ADMIN = Identity(user_id="1", email="admin@test.com", role="admin")
USER = Identity(user_id="2", email="user@test.com", role="user")


def test_statuses_accept_repeats_and_comma_lists() -> None:
    assert parse_statuses(["queued,running", "dead", " Succeeded "]) == (
        JobStatus.QUEUED,
        JobStatus.RUNNING,
        JobStatus.DEAD,
        JobStatus.SUCCEEDED,
    )


def test_statuses_drop_duplicates_and_empty_parts() -> None:
    assert parse_statuses(["dead,,dead", ""]) == (JobStatus.DEAD,)
    assert parse_statuses(None) == ()
    assert parse_statuses([]) == ()


def test_unknown_status_is_a_validation_error_naming_each_value() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_statuses(["queued,bogus", "nope"])
    assert caught.value.status_code == 422
    assert [d.field for d in caught.value.details] == ["status", "status"]
    assert "'bogus'" in caught.value.details[0].message
    assert "'nope'" in caught.value.details[1].message


def test_every_sort_field_maps_to_an_existing_column() -> None:
    assert set(SORT_COLUMNS) == set(SortField)
    for field in SortField:
        assert sort_column(field) in jobs.c
    assert sort_column(SortField.CREATED_AT) == "created_at"
    assert sort_column(SortField.UPDATED_AT) == "updated_at"
    assert sort_column(SortField.PRIORITY) == "priority"


def test_sort_field_values_are_the_api_names() -> None:
    assert {f.value for f in SortField} == {"createdAt", "updatedAt", "priority", "status", "type"}


@pytest.mark.parametrize(
    ("total", "size", "pages"),
    [(0, 20, 0), (1, 20, 1), (20, 20, 1), (21, 20, 2), (100, 100, 1), (101, 100, 2), (5, 1, 5)],
)
def test_total_pages(total: int, size: int, pages: int) -> None:
    assert total_pages(total, size) == pages


def test_page_offset_and_limit() -> None:
    assert (PageRequest(1, 20).offset, PageRequest(1, 20).limit) == (0, 20)
    assert PageRequest(3, 10).offset == 20
    assert PageRequest().page_size == 20


@pytest.mark.parametrize(("number", "size"), [(0, 20), (1, 0), (1, 101), (-1, 10)])
def test_page_request_refuses_out_of_range(number: int, size: int) -> None:
    with pytest.raises(ValueError):
        PageRequest(number, size)


def test_naive_datetimes_are_utc_and_aware_ones_kept() -> None:
    naive = datetime(2024, 1, 1, 12, 0)
    assert as_utc(naive) == datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
    aware = datetime(2024, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert as_utc(aware) is aware
    assert as_utc(None) is None


def test_created_range_refuses_an_inverted_window() -> None:
    start = datetime(2024, 1, 2, tzinfo=UTC)
    with pytest.raises(ValidationFailed) as caught:
        CreatedRange.of(start, start - timedelta(seconds=1))
    assert caught.value.details[0].field == "createdTo"
    assert CreatedRange.of(start, start) == CreatedRange(start, start)
    assert CreatedRange.of(None, None) == CreatedRange()


def test_visibility_admin_sees_all_or_one_owner() -> None:
    assert visibility_for(ADMIN) == Visibility(None)
    assert visibility_for(ADMIN, submitted_by="x@y.z") == Visibility("x@y.z")
    assert visibility_for(ADMIN, submitted_by="") == Visibility(None)


def test_visibility_user_sees_only_own_jobs() -> None:
    assert visibility_for(USER) == Visibility("user@test.com")
    assert visibility_for(USER, submitted_by="user@test.com") == Visibility("user@test.com")
    with pytest.raises(Forbidden):
        visibility_for(USER, submitted_by="admin@test.com")
