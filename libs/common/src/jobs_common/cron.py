"""Cron expressions and time zones (pure): validation, the next fire time and how often an
expression fires. The one rule for both the dashboard (a schedule's first ``nextFireAt``, its
checks) and the scheduler (every fire after it).

Fire times follow croniter in the schedule's own time zone: a wall-clock time skipped by a
daylight-saving jump fires at the first instant after the gap (02:30 on a spring-forward night
in Europe/Berlin fires at 03:00 CEST), and a wall-clock time that occurs twice when clocks fall
back fires at both occurrences. Stored fire times are UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

CRON_FIELDS = 5


def check_cron(expression: str) -> str:
    """The expression normalized to single spaces; ValueError unless it is a valid 5-field cron."""
    fields = expression.split()
    if len(fields) != CRON_FIELDS:
        raise ValueError(
            f"cron must have exactly {CRON_FIELDS} fields (minute hour day month weekday), "
            f"got {len(fields)}"
        )
    normalized = " ".join(fields)
    if not croniter.is_valid(normalized):
        raise ValueError(f"invalid cron expression {normalized!r}")
    return normalized


def check_timezone(name: str) -> ZoneInfo:
    """The IANA zone called ``name``; ValueError for anything else (including file paths)."""
    if not name or name != name.strip() or name.startswith(("/", ".")) or ".." in name:
        raise ValueError(f"unknown IANA time zone {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(f"unknown IANA time zone {name!r}") from exc


def next_fire_after(expression: str, timezone: str, after: datetime) -> datetime:
    """The first fire time strictly after ``after`` (aware), computed in ``timezone``, in UTC."""
    if after.tzinfo is None or after.utcoffset() is None:
        raise ValueError("after must be timezone-aware")
    zone = check_timezone(timezone)
    start = after.astimezone(zone)
    fire: datetime = croniter(check_cron(expression), start).get_next(datetime)
    fire_utc = fire.astimezone(UTC)
    if fire_utc <= after:  # croniter truncates sub-minute parts; never answer the past
        fire_utc = croniter(check_cron(expression), fire).get_next(datetime).astimezone(UTC)
    return fire_utc


GAP_SAMPLE_FIRES = 64


def shortest_gap_seconds(expression: str, timezone: str, after: datetime) -> float:
    """The shortest time between two consecutive fires among the next
    :data:`GAP_SAMPLE_FIRES` after ``after``: every firing day repeats the same minutes and
    hours, so a burst (``* 9 1 * *``) shows within the first fires it makes."""
    zone = check_timezone(timezone)
    fires = croniter(check_cron(expression), after.astimezone(zone))
    previous = fires.get_next(datetime)
    shortest = float("inf")
    for _ in range(GAP_SAMPLE_FIRES - 1):
        current = fires.get_next(datetime)
        shortest = min(shortest, (current - previous).total_seconds())
        previous = current
    return shortest
