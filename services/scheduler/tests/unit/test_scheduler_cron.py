import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from jobs_common.cron import next_fire_after
from jobs_scheduler.app.cron import job_from_template
from jobs_scheduler.domain.cron import due_firing
from jobs_scheduler.domain.fingerprint import fingerprint

pytestmark = pytest.mark.unit


def test_next_fire_time_is_computed_in_the_schedules_timezone() -> None:
    after = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    # 09:00 in New York (UTC-5 in January) is 14:00 UTC.
    assert next_fire_after("0 9 * * *", "America/New_York", after) == datetime(
        2026, 1, 15, 14, 0, tzinfo=UTC
    )


def test_dst_spring_forward_fires_once_at_the_next_valid_time() -> None:
    # Europe/Berlin jumps from 02:00 to 03:00 on 2026-03-29: 02:30 does not exist that day.
    fire = next_fire_after("30 2 * * *", "Europe/Berlin", datetime(2026, 3, 28, 23, 0, tzinfo=UTC))
    assert fire.tzinfo is not None
    assert (
        datetime(2026, 3, 29, 0, 0, tzinfo=UTC) <= fire <= datetime(2026, 3, 29, 2, 0, tzinfo=UTC)
    )


def test_fire_times_are_strictly_after_the_given_time() -> None:
    at = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
    assert next_fire_after("*/5 * * * *", "UTC", at) == at + timedelta(minutes=5)


def test_an_on_time_schedule_fires_its_due_time() -> None:
    due = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
    firing = due_firing("*/5 * * * *", "UTC", due, due + timedelta(seconds=1))
    assert (firing.fire_time, firing.next_fire_at, firing.missed) == (
        due,
        due + timedelta(minutes=5),
        0,
    )


def test_missed_fire_times_after_downtime_fire_once_not_a_storm() -> None:
    due = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)
    now = due + timedelta(hours=1, minutes=2)
    firing = due_firing("*/5 * * * *", "UTC", due, now)
    assert firing.fire_time == datetime(2026, 1, 1, 1, 0, tzinfo=UTC)  # the latest missed one
    assert firing.next_fire_at == datetime(2026, 1, 1, 1, 5, tzinfo=UTC)
    assert firing.missed == 12


def test_fingerprint_masks_ids_numbers_and_emails() -> None:
    a = fingerprint("HTTPError", "order 3f2a7c1e-1111-2222-3333-444455556666 got 503 after 2.5s")
    b = fingerprint("HTTPError", "order 9a9a9a9a-1111-2222-3333-444455556666 got 502 after 10s")
    assert a == b == "HTTPError: order <id> got <n> after <n>s"
    assert fingerprint("SMTPError", "to x@y.com refused") == "SMTPError: to <email> refused"
    assert fingerprint("A", "boom") != fingerprint("B", "boom")


def test_a_fire_runs_on_the_templates_named_queue_with_its_defaults() -> None:
    schedule = SimpleNamespace(
        id=uuid.uuid4(),
        owner="user@test.com",
        project_id=uuid.uuid4(),
        job_template={
            "type": "acme.invoice",
            "priority": 1,
            "payload": {"customer": "c-100"},
            "queue": "acme",
            "maxAttempts": 5,
            "timeoutSeconds": 60,
        },
    )
    fire = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)
    job = job_from_template(schedule, fire)
    assert (job.job_type, job.queue, job.max_attempts, job.timeout_seconds) == (
        "acme.invoice",
        "acme",
        5,
        60,
    )
    assert job.project() == schedule.project_id  # the schedule's project, not its owner's default
    assert job.job_id == job_from_template(schedule, fire).job_id  # one job per fire time
    older = SimpleNamespace(**{**vars(schedule), "job_template": {"type": "email"}})
    assert job_from_template(older, fire).queue == "default"  # stored before queues existed
