"""A relay pass cancelled by a stop (``finish_despite_cancel``): it finishes within its grace,
and one cut off at the grace has unwound (its transaction rolled back: its row locks and its
connection released) before the stop is reported, so the next pass finds its rows."""

import asyncio

import pytest

from jobs_scheduler.adapters.outbox_relay import finish_despite_cancel

pytestmark = pytest.mark.unit


async def test_a_pass_that_ends_within_its_grace_is_settled_before_the_stop_is_reported() -> None:
    settled: list[str] = []

    async def work() -> int:
        await asyncio.sleep(0.02)
        settled.append("rows deleted")
        return 1

    passing = asyncio.create_task(finish_despite_cancel(work(), timeout=5.0))
    await asyncio.sleep(0)  # the pass has started
    passing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await passing
    assert settled == ["rows deleted"]


async def test_a_pass_cut_off_at_its_grace_has_unwound_before_the_stop_is_reported() -> None:
    unwound: list[str] = []

    async def work() -> int:
        try:
            await asyncio.Event().wait()  # hangs past the grace (a broker that never confirms)
        finally:
            await asyncio.sleep(0.01)  # the ROLLBACK's round trip
            unwound.append("rolled back")
        return 1

    passing = asyncio.create_task(finish_despite_cancel(work(), timeout=0.2))
    await asyncio.sleep(0)  # the pass has started
    passing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await passing
    assert unwound == ["rolled back"]
