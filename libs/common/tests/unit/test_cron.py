"""Cron helpers: 5-field enforcement, IANA zones, next fire time across DST transitions."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs_common.cron import check_cron, check_timezone, next_fire_after

pytestmark = pytest.mark.unit

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    "expression",
    ["* * * * *", "*/5 * * * *", "0 9 * * 1-5", "30 2 1,15 * *", "0 0 1 jan sun", "59 23 31 12 6"],
)
def test_valid_five_field_expressions(expression: str) -> None:
    assert check_cron(expression) == expression


def test_whitespace_is_normalized() -> None:
    assert check_cron("  0   9 * *\t1-5 ") == "0 9 * * 1-5"


@pytest.mark.parametrize(
    "expression",
    [
        "",
        "* * * *",
        "* * * * * *",  # seconds field
        "0 0 * * * 2030",  # year field
        "@hourly",
        "@daily",
        "60 * * * *",
        "* 24 * * *",
        "* * 32 * *",
        "* * * 13 *",
        "* * * * 8",
        "nonsense a b c d",
    ],
)
def test_invalid_expressions_are_refused(expression: str) -> None:
    with pytest.raises(ValueError):
        check_cron(expression)


def test_field_count_message_names_the_count() -> None:
    with pytest.raises(ValueError, match="exactly 5 fields"):
        check_cron("* * * * * *")


@pytest.mark.parametrize("name", ["UTC", BERLIN, NEW_YORK, "Asia/Kolkata"])
def test_iana_zones(name: str) -> None:
    assert check_timezone(name) == ZoneInfo(name)


@pytest.mark.parametrize(
    "name", ["", "Mars/Olympus", "Europe/Berlinn", "../etc/passwd", "/etc/localtime", " UTC"]
)
def test_unknown_zones_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        check_timezone(name)


def test_next_fire_is_strictly_after_and_in_utc() -> None:
    now = datetime(2024, 6, 1, 10, 0, tzinfo=UTC)  # 12:00 in Berlin (CEST), a fire time itself
    fire = next_fire_after("0 12 * * *", BERLIN, now)
    assert fire == datetime(2024, 6, 2, 10, 0, tzinfo=UTC)
    assert fire.tzinfo is UTC
    just_before = next_fire_after("0 12 * * *", BERLIN, now - timedelta(microseconds=1))
    assert just_before == now
    assert next_fire_after("*/15 * * * *", "UTC", now + timedelta(seconds=59)) == now + timedelta(
        minutes=15
    )


def test_the_zone_decides_the_instant() -> None:
    now = datetime(2024, 1, 15, 0, 0, tzinfo=UTC)
    assert next_fire_after("0 9 * * *", BERLIN, now) == datetime(2024, 1, 15, 8, 0, tzinfo=UTC)
    assert next_fire_after("0 9 * * *", NEW_YORK, now) == datetime(2024, 1, 15, 14, 0, tzinfo=UTC)
    # an aware "after" in another zone means the same instant
    tokyo = now.astimezone(ZoneInfo("Asia/Tokyo"))
    assert next_fire_after("0 9 * * *", BERLIN, tokyo) == datetime(2024, 1, 15, 8, 0, tzinfo=UTC)


def test_berlin_spring_forward_skipped_time_fires_after_the_gap() -> None:
    # 2024-03-31 02:00 CET -> 03:00 CEST: 02:30 does not exist that night.
    after = datetime(2024, 3, 30, 12, 0, tzinfo=UTC)
    first = next_fire_after("30 2 * * *", BERLIN, after)
    assert first == datetime(2024, 3, 31, 1, 0, tzinfo=UTC)  # 03:00 CEST
    second = next_fire_after("30 2 * * *", BERLIN, first)
    assert second == datetime(2024, 4, 1, 0, 30, tzinfo=UTC)  # 02:30 CEST
    assert second - first == timedelta(hours=23, minutes=30)


def test_berlin_fall_back_repeated_time_fires_at_both_occurrences() -> None:
    # 2024-10-27 03:00 CEST -> 02:00 CET: 02:30 happens twice.
    after = datetime(2024, 10, 26, 12, 0, tzinfo=UTC)
    first = next_fire_after("30 2 * * *", BERLIN, after)
    second = next_fire_after("30 2 * * *", BERLIN, first)
    third = next_fire_after("30 2 * * *", BERLIN, second)
    assert first == datetime(2024, 10, 27, 0, 30, tzinfo=UTC)  # 02:30 CEST
    assert second == datetime(2024, 10, 27, 1, 30, tzinfo=UTC)  # 02:30 CET
    assert third == datetime(2024, 10, 28, 1, 30, tzinfo=UTC)


def test_new_york_daily_fire_keeps_wall_clock_across_dst() -> None:
    # 2024-03-10: EST (UTC-5) -> EDT (UTC-4); a 09:00 schedule moves one hour earlier in UTC.
    before = next_fire_after("0 9 * * *", NEW_YORK, datetime(2024, 3, 9, 12, 0, tzinfo=UTC))
    after = next_fire_after("0 9 * * *", NEW_YORK, before)
    assert before == datetime(2024, 3, 9, 14, 0, tzinfo=UTC)
    assert after == datetime(2024, 3, 10, 13, 0, tzinfo=UTC)


def test_hourly_across_new_york_spring_forward_has_no_duplicate() -> None:
    fires = []
    at = datetime(2024, 3, 10, 5, 30, tzinfo=UTC)  # 00:30 EST
    for _ in range(4):
        at = next_fire_after("0 * * * *", NEW_YORK, at)
        fires.append(at)
    assert fires == [datetime(2024, 3, 10, hour, 0, tzinfo=UTC) for hour in (6, 7, 8, 9)]


def test_naive_after_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next_fire_after("* * * * *", "UTC", datetime(2024, 1, 1))
