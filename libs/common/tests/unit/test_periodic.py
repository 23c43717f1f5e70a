"""``jobs_common.periodic.every``: after each pause, or at once and then after each pause; a
failing round is logged and the next runs as planned."""

from __future__ import annotations

import asyncio

import pytest

from jobs_common.periodic import every

pytestmark = pytest.mark.unit


async def rounds_within(seconds: float, *, at_once: bool, fail: bool = False) -> int:
    count = 0

    async def action() -> None:
        nonlocal count
        count += 1
        if fail:
            raise RuntimeError("this round fails")

    task = asyncio.create_task(every(3600, action, name="t", at_once=at_once))
    await asyncio.sleep(seconds)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return count


async def test_it_waits_a_pause_first_unless_told_to_run_at_once() -> None:
    assert await rounds_within(0.05, at_once=False) == 0
    assert await rounds_within(0.05, at_once=True) == 1


async def test_a_failing_first_round_does_not_end_the_loop() -> None:
    assert await rounds_within(0.05, at_once=True, fail=True) == 1
