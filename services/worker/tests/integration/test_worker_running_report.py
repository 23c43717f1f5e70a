"""JobRunning is deferred: an attempt quicker than RUNNING_REPORT_DELAY reports only its
result (which says when it started); a longer one is announced while it runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jobs_common.topology import RESULTS, RUNNING
from jobs_testing.waiting import eventually
from jobs_testing.worker_messages import Observer, job_of, make_dispatch, quick_simulate

pytestmark = pytest.mark.integration


async def test_a_quick_attempt_sends_only_its_result(start_worker: Any, observer: Observer) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker(running_report_delay=1.0)
    dispatch = make_dispatch("simulate", quick_simulate(), priority=2)
    before = asyncio.get_running_loop().time()
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded" and result.worker_id == runtime.worker_id
    assert result.started_at <= result.finished_at
    await asyncio.sleep(max(0.0, before + 1.5 - asyncio.get_running_loop().time()))
    assert [m for m in running.messages if job_of(m) == str(dispatch.job_id)] == []


async def test_a_longer_attempt_is_announced_while_it_runs(
    start_worker: Any, observer: Observer
) -> None:
    running = await observer.collect(RUNNING)
    results = await observer.collect(RESULTS)
    runtime = await start_worker(running_report_delay=0.1)
    dispatch = make_dispatch("simulate", quick_simulate(minSeconds=1.0, maxSeconds=1.0), priority=2)
    await observer.publish(dispatch)
    started = await observer.wait_running(running, dispatch.job_id)
    assert not [r for r in results.results() if r.job_id == dispatch.job_id]  # still runs

    async def leased() -> bool:  # from the confirm on, the heartbeat renews its lease
        return runtime.active.leased() == [(dispatch.job_id, dispatch.attempt, started.started_at)]

    await eventually(leased, timeout=0.5, what="the attempt leased")
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.started_at == started.started_at < result.finished_at
