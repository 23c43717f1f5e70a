"""Schedules declared in code: ``@handler(..., schedules=[Cron("0 3 * * *", Payload(...))])``.

A worker reconciles the schedules its handlers declare when it starts: each is created, or
updated in place, by its name in the project the worker serves, so every deploy (and every
replica) may declare it again without duplicating it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

# Five fields, as the scheduler's cron parser (croniter) takes them; checked there in full.
_FIVE_FIELDS = re.compile(r"^\S+(\s+\S+){4}$")
# No "/": the name is a path segment of PUT /api/schedules/by-name/{name}.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,199}$")


@dataclass(frozen=True)
class Cron:
    """Fire the handler's job type on ``expression`` (five cron fields) in ``timezone``.

    ``name`` identifies the schedule across deploys (default: the job type); give each of a
    handler's schedules its own. ``payload`` is the job's payload, a model instance of the
    handler's payload type or a mapping it validates."""

    expression: str
    payload: BaseModel | Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    timezone: str = "UTC"
    priority: int | None = None  # None: the queue's default priority

    def __post_init__(self) -> None:
        if not _FIVE_FIELDS.match(self.expression.strip()):
            raise ValueError(f"Cron({self.expression!r}): a cron expression has five fields")
        if self.name is not None and not _NAME.match(self.name):
            raise ValueError(f"Cron name {self.name!r}: 1-200 letters, digits, ' ._:-'")
        if self.priority is not None and self.priority not in (1, 2, 3):
            raise ValueError("Cron priority is 1 (low), 2 (medium) or 3 (high)")

    def payload_json(self) -> dict[str, Any]:
        """The payload as JSON the API takes (a model by alias, as a submission sends it)."""
        if isinstance(self.payload, BaseModel):
            return self.payload.model_dump(mode="json", by_alias=True)
        return dict(self.payload)

    def schedule_name(self, job_type: str) -> str:
        return self.name or job_type
