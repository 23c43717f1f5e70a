"""A DAG child's dispatches carry its parents' results, by id and by batch ref, within the
bound a dispatch carries; a job without parents carries none (docs/sdk.md, "Parent
results"). Every dispatch names who the job runs for (ctx.submit)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.contracts import PARENT_RESULTS_MAX_BYTES, RetryPolicySpec
from jobs_common.rabbit import RabbitBus
from jobs_common.tenancy import personal_project_id

from .conftest import job_result, next_dispatch, submitted, wait_status

pytestmark = pytest.mark.integration


async def test_a_child_dispatch_carries_its_parents_results_on_every_attempt(
    bus: RabbitBus, db: AsyncEngine
) -> None:
    batch_id, other_batch = uuid.uuid4(), uuid.uuid4()
    small = submitted(batch_id=batch_id, batch_size=3, ref="a")
    # A ref of another batch names nothing in this one; this result is past the bound.
    large = submitted(batch_id=other_batch, batch_size=1, ref="b")
    child = submitted(
        batch_id=batch_id,
        batch_size=3,
        depends_on=[small.job_id, large.job_id],
        retry_policy=RetryPolicySpec(strategy="fixed", base_delay_ms=0, jitter=False),
    )
    await bus.publisher.publish(topology.SUBMITTED, child)
    await wait_status(db, child.job_id, "blocked")
    for parent in (small, large):
        await bus.publisher.publish(topology.SUBMITTED, parent)
        dispatch = await next_dispatch(bus)
        assert dispatch.parents == []  # no parents: nothing extra
        assert dispatch.submitted_by == "user@test.com"
        assert dispatch.project_id == personal_project_id("user@test.com")
    blob = {"blob": "x" * PARENT_RESULTS_MAX_BYTES}
    for parent, result in ((small, {"width": 640}), (large, blob)):
        await bus.publisher.publish(
            topology.RESULTS, job_result(parent.job_id, 1, "succeeded", result=result)
        )

    first = await next_dispatch(bus)
    assert (first.job_id, first.attempt) == (child.job_id, 1)
    by_id = {p.job_id: p for p in first.parents}
    assert by_id[small.job_id].ref == "a" and by_id[small.job_id].result == {"width": 640}
    too_large = by_id[large.job_id]
    assert (too_large.ref, too_large.result, too_large.omitted) == (None, None, True)
    assert too_large.size is not None and too_large.size > PARENT_RESULTS_MAX_BYTES
    assert len(first.to_json()) < PARENT_RESULTS_MAX_BYTES

    # A retry is dispatched with them again.
    await bus.publisher.publish(topology.RESULTS, job_result(child.job_id, 1, "failed"))
    second = await next_dispatch(bus)
    assert (second.job_id, second.attempt) == (child.job_id, 2)
    assert second.parents == first.parents
