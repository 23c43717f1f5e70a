"""simulate: the reference demo's job (maybe fail at once, else work a while, flip a coin)."""

from __future__ import annotations

import asyncio
from typing import Any

from jobs_common.payloads import SimulatePayload
from jobs_worker.domain.context import HandlerSpec, JobContext
from jobs_worker.domain.errors import RetryableJobError
from jobs_worker.domain.simulate import plan_simulation


async def run(ctx: JobContext, payload: SimulatePayload) -> dict[str, Any]:
    plan = plan_simulation(payload)
    if plan.immediate_failure:
        raise RetryableJobError("simulated immediate failure", error_class="SimulatedFailure")
    await asyncio.sleep(plan.duration_seconds)
    if plan.fails:
        raise RetryableJobError("simulated failure", error_class="SimulatedFailure")
    return {"durationSeconds": round(plan.duration_seconds, 6)}


SPEC = HandlerSpec(payload_model=SimulatePayload, run=run)
