"""Handlers for the tests of results along a DAG and jobs from a handler
(tests/e2e/test_dag_follow_ups_e2e.py), on a queue of their own (``dag``). Loaded by a worker
with ``WORKER_HANDLER_MODULES=jobs_testing.dag_handlers``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from jobs_sdk import JobContext, handler

DAG_MODULE = __name__
DAG_QUEUE = "dag"


class Produce(BaseModel):
    width: int
    tag: str = ""


class Produced(BaseModel):
    width: int


class Consume(BaseModel):
    pass


class Spawn(BaseModel):
    tag: str
    fail_first: bool = False


@handler("dag.produce", payload=Produce, result=Produced, queue=DAG_QUEUE)
async def produce(ctx: JobContext, payload: Produce) -> Produced:
    return Produced(width=payload.width)


@handler("dag.consume", payload=Consume, queue=DAG_QUEUE)
async def consume(ctx: JobContext, payload: Consume) -> dict[str, Any]:
    a = ctx.parent_result("a", Produced)
    return {
        "fromA": a.width,
        "byRef": dict(ctx.parent_results_by_ref),
        "byId": {str(job_id): result for job_id, result in ctx.parent_results.items()},
    }


@handler("dag.spawn", payload=Spawn, queue=DAG_QUEUE, max_attempts=3)
async def spawn(ctx: JobContext, payload: Spawn) -> dict[str, Any]:
    """Submits a follow-up, then (``fail_first``) fails its first attempt after that."""
    child = await ctx.submit(produce, Produce(width=7, tag=payload.tag))
    if payload.fail_first and ctx.attempt == 1:
        raise RuntimeError("failed after submitting its follow-up")
    return {"child": str(child)}


@handler("dag.spawn_sync", payload=Spawn, queue=DAG_QUEUE)
def spawn_sync(ctx: JobContext, payload: Spawn) -> dict[str, Any]:
    child = ctx.submit_sync("dag.produce", {"width": 9, "tag": payload.tag}, delay=0)
    return {"child": str(child)}
