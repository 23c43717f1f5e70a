"""Rollup reads without I/O: how a created range is split into spans the rollups answer, the
runtime percentile from buckets, and the listing cursor."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs_common.errors import ValidationFailed
from jobs_dashboard.domain.analytics import (
    DAY,
    EPOCH,
    HOUR,
    MINUTE,
    RuntimeBucket,
    Source,
    Span,
    plan_spans,
    runtime_percentile,
)
from jobs_dashboard.domain.query import (
    MAX_OFFSET_ROWS,
    Cursor,
    JobFilters,
    JobListQuery,
    PageRequest,
    SortDirection,
    SortField,
    Visibility,
    sort_key,
)
from jobs_testing.stats import percentile_cont

pytestmark = pytest.mark.unit

T = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
D0, D1 = T - 10 * HOUR, T + 14 * HOUR  # the midnights around T
S = timedelta(seconds=1)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (None, None, [(Source.DAYS, None, None), (Source.DELTAS, None, None)]),
        # whole days, with hours and minutes around them
        (
            D0 - 2 * MINUTE,
            D1 + HOUR,
            [
                (Source.MINUTES, D0 - 2 * MINUTE, D0),
                (Source.DAYS, D0, D1),
                (Source.HOURS, D1, D1 + HOUR),
                (Source.DELTAS, D0 - 2 * MINUTE, D1 + HOUR),
            ],
        ),
        # whole hours only
        (T, T + 2 * HOUR, [(Source.HOURS, T, T + 2 * HOUR), (Source.DELTAS, T, T + 2 * HOUR)]),
        # whole minutes within one hour
        (
            T + MINUTE,
            T + 3 * MINUTE,
            [
                (Source.MINUTES, T + MINUTE, T + 3 * MINUTE),
                (Source.DELTAS, T + MINUTE, T + 3 * MINUTE),
            ],
        ),
        # partial minutes at both edges around whole minutes and a whole hour
        (
            T - 2 * MINUTE - 30 * S,
            T + HOUR + MINUTE + 5 * S,
            [
                (Source.JOBS, T - 2 * MINUTE - 30 * S, T - 2 * MINUTE),
                (Source.MINUTES, T - 2 * MINUTE, T),
                (Source.HOURS, T, T + HOUR),
                (Source.MINUTES, T + HOUR, T + HOUR + MINUTE),
                (Source.DELTAS, T - 2 * MINUTE, T + HOUR + MINUTE),
                (Source.JOBS, T + HOUR + MINUTE, T + HOUR + MINUTE + 5 * S),
            ],
        ),
        # within one minute, or across one minute boundary with no whole minute: jobs only
        (T + 5 * S, T + 50 * S, [(Source.JOBS, T + 5 * S, T + 50 * S)]),
        (T - 5 * S, T + 5 * S, [(Source.JOBS, T - 5 * S, T + 5 * S)]),
        # open ends
        (
            T + 30 * S,
            None,
            [
                (Source.JOBS, T + 30 * S, T + MINUTE),
                (Source.MINUTES, T + MINUTE, T + HOUR),
                (Source.HOURS, T + HOUR, D1),
                (Source.DAYS, D1, None),
                (Source.DELTAS, T + MINUTE, None),
            ],
        ),
        (
            None,
            T + 30 * S,
            [
                (Source.DAYS, None, D0),
                (Source.HOURS, D0, T),
                (Source.DELTAS, None, T),
                (Source.JOBS, T, T + 30 * S),
            ],
        ),
        # empty and inverted ranges count nothing
        (T, T, []),
        (T + HOUR, T, []),
    ],
)
def test_plan_spans(start: datetime | None, end: datetime | None, expected: list[tuple]) -> None:
    assert plan_spans(start, end) == [Span(*e) for e in expected]


moments = st.integers(min_value=0, max_value=5 * 24 * 3600 * 1000).map(
    lambda ms: T + timedelta(milliseconds=ms)
)


@given(start=st.none() | moments, end=st.none() | moments, probe=moments)
def test_spans_count_every_created_time_once(
    start: datetime | None, end: datetime | None, probe: datetime
) -> None:
    """A job created at ``probe`` is counted by exactly one rollup-or-jobs span when it is in
    the range, by none otherwise; deltas cover exactly the rollup spans."""
    spans = plan_spans(start, end)
    inside = (start is None or probe >= start) and (end is None or probe < end)

    def holds(span: Span, at: datetime) -> bool:
        return (span.start is None or at >= span.start) and (span.end is None or at < span.end)

    counting = [s for s in spans if s.source is not Source.DELTAS and holds(s, probe)]
    assert len(counting) == (1 if inside else 0)
    minute = EPOCH + ((probe - EPOCH) // MINUTE) * MINUTE  # a delta's bucket
    rollups = (Source.MINUTES, Source.HOURS, Source.DAYS)
    by_rollups = any(holds(s, minute) for s in spans if s.source in rollups)
    by_deltas = any(holds(s, minute) for s in spans if s.source is Source.DELTAS)
    assert by_rollups == by_deltas
    grains = {Source.MINUTES: MINUTE, Source.HOURS: HOUR, Source.DAYS: DAY}
    for span in spans:
        if span.source in grains:
            for bound in (span.start, span.end):
                assert bound is None or (bound - EPOCH) % grains[span.source] == timedelta(0)


@given(
    st.lists(st.floats(min_value=0.5, max_value=1e7), min_size=1, max_size=60),
    st.sampled_from([0.5, 0.95, 0.99]),
)
def test_runtime_percentile_is_within_a_bucket_of_the_exact_one(
    runtimes: list[float], fraction: float
) -> None:
    import math

    buckets: dict[int, RuntimeBucket] = {}
    for ms in runtimes:
        k = 0 if ms < 1 else 1 + math.floor(math.log(ms) / math.log(1.1))
        found = buckets.get(k, RuntimeBucket(0, 0.0))
        buckets[k] = RuntimeBucket(found.jobs + 1, found.runtime_ms + ms)
    exact = percentile_cont(runtimes, fraction)
    approx = runtime_percentile(buckets, fraction)
    assert approx is not None and exact is not None
    assert abs(approx - exact) <= 0.1 * exact + 1.0


def test_runtime_percentile_is_exact_with_one_runtime_a_bucket() -> None:
    values = [100.0, 200.0, 300.0, 400.0, 1500.0]
    buckets = {i: RuntimeBucket(1, v) for i, v in enumerate(values)}
    assert runtime_percentile(buckets, 0.95) == pytest.approx(percentile_cont(values, 0.95))
    assert runtime_percentile({}, 0.95) is None


@pytest.mark.parametrize("field", list(SortField))
@pytest.mark.parametrize("direction", list(SortDirection))
def test_a_cursor_reads_back_as_written(field: SortField, direction: SortDirection) -> None:
    import uuid

    values = {
        "created_at": T,
        "updated_at": T + S,
        "id": uuid.uuid4(),
        "priority": 2,
        "status": "queued",
        "type": "email",
    }
    cursor = Cursor(field, direction, tuple(values[c] for c in sort_key(field)), 3)
    assert Cursor.decode(cursor.encode()) == cursor


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not base64 at all!",
        "W10",  # []
        Cursor(SortField.CREATED_AT, SortDirection.DESC, (T, "nope"), 2).encode(),
        Cursor(SortField.PRIORITY, SortDirection.DESC, ("high", T, "x"), 2).encode(),
        Cursor(SortField.CREATED_AT, SortDirection.DESC, ("2026-01-01T00:00:00", "x"), 2).encode(),
    ],
)
def test_a_bad_cursor_is_a_validation_error(token: str) -> None:
    with pytest.raises(ValidationFailed) as failed:
        Cursor.decode(token)
    assert failed.value.details[0].field == "cursor"


def test_a_cursor_belongs_to_its_order_and_names_its_page() -> None:
    import uuid

    filters = JobFilters(Visibility(None))
    cursor = Cursor(SortField.CREATED_AT, SortDirection.DESC, (T, uuid.uuid4()), 7).encode()
    query = JobListQuery.of(
        filters, PageRequest(1, 50), SortField.CREATED_AT, SortDirection.DESC, cursor
    )
    assert (query.page.page_number, query.page.page_size) == (7, 50)
    with pytest.raises(ValidationFailed):
        JobListQuery.of(
            filters, PageRequest(1, 50), SortField.CREATED_AT, SortDirection.ASC, cursor
        )


def test_page_numbers_reach_the_first_rows_only() -> None:
    filters = JobFilters(Visibility(None))
    last = MAX_OFFSET_ROWS // 100
    JobListQuery.of(filters, PageRequest(last, 100), SortField.CREATED_AT, SortDirection.DESC, None)
    with pytest.raises(ValidationFailed) as failed:
        JobListQuery.of(
            filters, PageRequest(last + 1, 100), SortField.CREATED_AT, SortDirection.DESC, None
        )
    assert failed.value.details[0].field == "pageNumber"
