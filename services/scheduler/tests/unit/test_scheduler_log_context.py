"""Messages applied one by one are applied with their trace id, job id and attempt bound to
the log context; nothing stays bound after the batch."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest

from jobs_common import log_context
from jobs_common.contracts import CancelRequested, utcnow
from jobs_scheduler.api.queues import Parsed, one_by_one

pytestmark = pytest.mark.unit


async def test_each_message_is_applied_with_its_fields_bound() -> None:
    seen: list[dict[str, Any]] = []

    async def apply(connection: Any, changes: Any, message: Any, delivery: Any) -> bool:
        seen.append(log_context.current())
        return True

    first, second = sorted((uuid.uuid4(), uuid.uuid4()), key=str)
    messages = [
        CancelRequested(job_id=second, trace_id="t-2", requested_by="u", requested_at=utcnow()),
        CancelRequested(job_id=first, trace_id="t-1", requested_by="u", requested_at=utcnow()),
    ]
    outcomes = await one_by_one(apply)(None, None, [Parsed(m, None) for m in messages])  # type: ignore[arg-type]
    assert outcomes == Counter(applied=2)
    assert seen == [
        {"trace_id": "t-1", "job_id": str(first)},
        {"trace_id": "t-2", "job_id": str(second)},
    ]
    assert log_context.current() == {}
