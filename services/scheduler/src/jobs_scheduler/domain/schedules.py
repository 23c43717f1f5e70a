"""Schedule commands' rules: the owner's caps, judged on what the creating transaction
counted; a schedule declared in code as the row it becomes."""

from __future__ import annotations

from typing import Any

from jobs_common.contracts import DeclaredSchedule
from jobs_common.cron import check_cron, check_timezone
from jobs_common.errors import Conflict, ErrorDetail, TooManyRequests
from jobs_common.schedule_commands import ScheduleCaps

DEFAULT_PRIORITY = 2  # a declaration naming none: medium, or its queue's default priority


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


class DeclaredInCode(Conflict):
    """The API may not change a schedule that code declares: the next announcement of the
    worker would change it back."""

    def __init__(self, name: str, module: str) -> None:
        super().__init__(
            f"schedule {name!r} is declared in code ({module}): change it there, or delete it "
            "here once no worker declares it",
            details=[ErrorDetail(field="name", message=f"declared in code by {module}")],
        )


def declared_row(declared: DeclaredSchedule) -> tuple[str, str, dict[str, Any]]:
    """The cron (normalized), time zone and ``job_template`` of a declared schedule, as the
    API stores a template (``jobs_dashboard.domain.schedules.JobTemplate.stored``). Raises
    ValueError for a cron expression or time zone the scheduler cannot use."""
    cron = check_cron(declared.cron)
    check_timezone(declared.timezone)
    template = {
        "type": declared.job_type,
        "priority": declared.priority or DEFAULT_PRIORITY,
        "payload": declared.payload,
        "queue": declared.queue,
        "maxAttempts": declared.max_attempts,
        "timeoutSeconds": declared.timeout_seconds,
        "retryPolicy": None,
        "retryPolicyName": None,
    }
    if declared.priority is None:
        template["priorityDefault"] = True
    return cron, declared.timezone, template
