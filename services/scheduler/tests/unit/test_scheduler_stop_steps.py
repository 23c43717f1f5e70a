"""A scheduler's stop goes on past a step that hangs (a broker or database that stopped
answering), naming the step in its log, instead of holding the process."""

import asyncio
import logging

import pytest

from jobs_scheduler import service

pytestmark = pytest.mark.unit


async def test_a_hanging_stop_step_is_left_behind_and_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(service, "STOP_STEP_SECONDS", 0.05)
    never = asyncio.get_running_loop().create_future()
    with caplog.at_level(logging.WARNING, logger=service.__name__):
        await asyncio.wait_for(service._bounded("broker", never), timeout=5)
    [record] = [r for r in caplog.records if getattr(r, "action", None) == "stop_step_timeout"]
    assert record.step == "broker"  # type: ignore[attr-defined]


async def test_a_step_that_ends_in_time_is_awaited_to_its_end() -> None:
    done: list[str] = []

    async def step() -> None:
        await asyncio.sleep(0)
        done.append("closed")

    await service._bounded("database", step())
    assert done == ["closed"]
