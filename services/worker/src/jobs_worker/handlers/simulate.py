"""simulate: the reference demo's job (maybe fail at once, else work a while, flip a coin)."""

from __future__ import annotations

import asyncio
from typing import Any

from jobs_sdk.errors import RetryableJobError
from jobs_worker.domain.simulate import plan_simulation
from jobs_worker.handlers.payloads import SimulatePayload
from jobs_worker.sdk import JobContext, handler


@handler("simulate", payload=SimulatePayload)
async def run(ctx: JobContext, payload: SimulatePayload) -> dict[str, Any]:
    plan = plan_simulation(payload)
    if plan.immediate_failure:
        ctx.log.info("failing at once (immediateFailureRate %s)", payload.immediate_failure_rate)
        raise RetryableJobError("simulated immediate failure", error_class="SimulatedFailure")
    ctx.log.info("sleeping %.3f s", plan.duration_seconds)
    await asyncio.sleep(plan.duration_seconds)
    if plan.fails:
        ctx.log.info(
            "worked %.3f s, then failed (failureRate %s)",
            plan.duration_seconds,
            payload.failure_rate,
        )
        raise RetryableJobError("simulated failure", error_class="SimulatedFailure")
    ctx.log.info("worked %.3f s, succeeded", plan.duration_seconds)
    return {"durationSeconds": round(plan.duration_seconds, 6)}
