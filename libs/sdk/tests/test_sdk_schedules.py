"""``Cron`` declarations: checked where they are written, and one name per schedule."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from jobs_sdk import Cron, HandlerDefinitionError, JobContext, handler, spec_of

pytestmark = pytest.mark.unit


class Report(BaseModel):
    days: int = 1


class Other(BaseModel):
    pass


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"expression": "0 3 * *"}, "five fields"),
        ({"expression": "0 3 * * *", "name": "nightly/report"}, "letters, digits"),
        ({"expression": "0 3 * * *", "priority": 4}, r"1 \(low\), 2 \(medium\) or 3 \(high\)"),
    ],
)
def test_a_declaration_that_cannot_work_is_refused(
    arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Cron(**arguments)  # type: ignore[arg-type]


def test_a_handler_s_schedules_are_kept_with_their_payloads() -> None:
    @handler(
        "acme.report",
        payload=Report,
        schedules=[Cron("0 3 * * *", Report(days=7), name="weekly", priority=3), Cron("0 * * * *")],
    )
    async def report(ctx: JobContext, payload: Report) -> None:
        return None

    spec = spec_of(report)
    assert spec is not None
    weekly, hourly = spec.schedules
    assert (weekly.schedule_name("acme.report"), weekly.payload_json()) == ("weekly", {"days": 7})
    assert (hourly.schedule_name("acme.report"), hourly.payload_json()) == ("acme.report", {})


def test_two_schedules_of_one_name_or_a_foreign_payload_are_refused() -> None:
    with pytest.raises(HandlerDefinitionError, match="a name of its own"):
        handler("acme.twice", payload=Report, schedules=[Cron("0 3 * * *"), Cron("0 4 * * *")])
    with pytest.raises(HandlerDefinitionError, match="carries a Other, not a Report"):
        handler("acme.foreign", payload=Report, schedules=[Cron("0 3 * * *", Other())])
