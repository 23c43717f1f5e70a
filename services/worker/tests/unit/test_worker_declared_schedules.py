"""What a worker sends for the schedules its handlers declare (``@handler(schedules=...)``):
checked at start like a schedule made through the API (cron, time zone, payload against the
handler's model), or refused with a message naming the schedule, the type and the module."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from jobs_sdk import Cron, JobContext, handler
from jobs_sdk.declare import spec_of
from jobs_worker.app.declared_schedules import ScheduleDeclarationError, declared_schedules

pytestmark = pytest.mark.unit


class Report(BaseModel):
    kind: str
    days_back: int = Field(default=1, alias="daysBack", ge=1)


def registry(*crons: Cron, job_type: str = "acme.report", queue: str = "reports") -> Any:
    @handler(job_type, payload=Report, queue=queue, max_attempts=4, schedules=crons)
    async def run(ctx: JobContext, payload: Report) -> None:
        return None

    spec = spec_of(run)
    assert spec is not None
    return {spec.job_type: spec}


def test_a_declaration_is_sent_checked_with_the_payload_as_its_model_dumps_it() -> None:
    [nightly, weekly] = declared_schedules(
        registry(
            Cron("0  3 * * *", Report(kind="daily"), name="nightly", timezone="Europe/Berlin"),
            Cron("0 6 * * 1", {"kind": "weekly", "daysBack": 7}, name="weekly", priority=3),
        )
    )
    assert (nightly.name, nightly.cron, nightly.timezone, nightly.priority) == (
        "nightly",
        "0 3 * * *",
        "Europe/Berlin",
        None,
    )
    assert nightly.payload == {"kind": "daily", "daysBack": 1}
    assert (nightly.job_type, nightly.queue, nightly.max_attempts) == ("acme.report", "reports", 4)
    assert nightly.declared_in == __name__
    assert (weekly.payload, weekly.priority) == ({"kind": "weekly", "daysBack": 7}, 3)


@pytest.mark.parametrize(
    ("cron", "refused"),
    [
        (Cron("61 * * * *", {"kind": "x"}), "invalid cron"),
        (Cron("0 3 * * *", {"kind": "x"}, timezone="Mars/Base"), "time zone"),
        (Cron("0 3 * * *", {"kind": "x", "daysBack": 0}), "daysBack"),
        (Cron("0 3 * * *", {}), "kind"),
    ],
)
def test_an_unusable_declaration_stops_the_worker_naming_it(cron: Cron, refused: str) -> None:
    with pytest.raises(ScheduleDeclarationError) as error:
        declared_schedules(registry(cron))
    assert refused in str(error.value)
    assert f"schedule 'acme.report' of 'acme.report' ({__name__})" in str(error.value)


def test_two_handlers_may_not_declare_one_name() -> None:
    both = registry(Cron("0 3 * * *", {"kind": "a"}, name="nightly")) | registry(
        Cron("0 4 * * *", {"kind": "b"}, name="nightly"), job_type="acme.other"
    )
    with pytest.raises(ScheduleDeclarationError, match="nightly"):
        declared_schedules(both)


def test_no_declarations_send_nothing() -> None:
    assert declared_schedules(registry()) == []
