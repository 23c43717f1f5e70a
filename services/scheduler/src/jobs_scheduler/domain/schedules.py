"""Schedule commands' rules: the owner's caps, judged on what the creating transaction
counted."""

from __future__ import annotations

from jobs_common.errors import TooManyRequests
from jobs_common.schedule_commands import ScheduleCaps


class ScheduleQuotaExceeded(TooManyRequests):
    pass


def check_caps(caps: ScheduleCaps, *, schedules: int, email_schedules: int, is_email: bool) -> None:
    """``schedules``/``email_schedules``: the owner's existing ones. Raises past a cap."""
    if caps.max_schedules and schedules >= caps.max_schedules:
        raise ScheduleQuotaExceeded(
            f"schedule quota reached: at most {caps.max_schedules} schedules per user; "
            "delete one to create another"
        )
    if is_email and caps.max_email_schedules and email_schedules >= caps.max_email_schedules:
        raise ScheduleQuotaExceeded(
            f"email schedule quota reached: at most {caps.max_email_schedules} schedules "
            "of email jobs per user; delete one to create another"
        )
