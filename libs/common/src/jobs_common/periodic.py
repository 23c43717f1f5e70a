"""Background work: periodic actions that log their failures and go on."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


async def every(
    seconds: float,
    action: Callable[[], Awaitable[object]],
    *,
    name: str,
    at_once: bool = False,
) -> None:
    """Run ``action`` every ``seconds`` (after each pause; with ``at_once`` also before the
    first) until cancelled; a failure is logged with ``action=<name>`` and the next round runs
    as planned."""
    pause = not at_once
    while True:
        if pause:
            await asyncio.sleep(seconds)
        pause = True
        try:
            await action()
        except Exception:
            log.exception("periodic action failed", extra={"action": name})


class BackgroundLoops:
    """Tasks started with the app and cancelled (then awaited) when it stops."""

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []

    def start(
        self,
        seconds: float,
        action: Callable[[], Awaitable[object]],
        *,
        name: str,
        at_once: bool = False,
    ) -> None:
        task = every(seconds, action, name=name, at_once=at_once)
        self._tasks.append(asyncio.create_task(task, name=name))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
