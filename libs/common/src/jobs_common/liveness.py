"""Liveness: a service whose own parts stay broken past a bound says so and exits.

``/ready`` answers whether the service can do its work now (dependencies included); a load
balancer stops sending it work while it is not ready, and it comes back by itself. ``/health``
answers whether the process is worth keeping: a watchdog polls the service's *own* parts
(its broker connection and channels, its consumers as the broker counts them, its loops;
not the database or other services, which a restart of this one cannot mend) every
``interval`` seconds. While some part fails, ``/health`` still answers 200 with status
``recovering`` and what fails since when; once a part has failed for ``give_up_after``
seconds without a break, ``/health`` answers 503 ``unhealthy`` and the process ends itself
(the usual graceful stop, as on SIGTERM, then exit status :data:`EXIT_UNHEALTHY`), so
that ``make dev``'s supervisor or the container's restart policy starts it afresh. A broker
restart that the robust connection rides out is no reason to exit; a consumer that never
came back is.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

LiveCheck = Callable[[], Awaitable[dict[str, bool]]]

EXIT_UNHEALTHY = 70  # EX_SOFTWARE: the process gave up on itself
# Past this after asking itself to stop, the process exits at once (a stop that hangs).
HARD_EXIT_AFTER_SECONDS = 60.0

_gave_up = False
_stop_hook: Callable[[], None] | None = None


def gave_up() -> bool:
    """Whether a watchdog of this process gave up (the process should exit non-zero)."""
    return _gave_up


def set_stop_hook(hook: Callable[[], None]) -> None:
    """How this process stops gracefully (its server's exit flag; jobs_common.serve sets it)."""
    global _stop_hook
    _stop_hook = hook


def stop_gracefully() -> None:
    """Stop this process as on SIGTERM, for a clean exit (status 0): it was asked to stop
    (a worker's ``stop`` command), it did not give up on itself."""
    if _stop_hook is not None:
        _stop_hook()
    else:
        os.kill(os.getpid(), signal.SIGTERM)


def stop_this_process() -> None:
    """Stop this process as on SIGTERM (through the stop hook, else the signal), and exit at
    once if that hangs."""
    global _gave_up
    _gave_up = True
    if _stop_hook is not None:
        _stop_hook()
    else:
        os.kill(os.getpid(), signal.SIGTERM)
    asyncio.get_running_loop().call_later(HARD_EXIT_AFTER_SECONDS, os._exit, EXIT_UNHEALTHY)


@dataclass
class Watchdog:
    """Polls ``check`` and tracks how long each failing part has failed."""

    check: LiveCheck
    give_up_after: float
    interval: float
    on_give_up: Callable[[], None] = stop_this_process
    clock: Callable[[], float] = time.monotonic
    # part -> when it started failing (clock time); cleared when it passes again.
    failing_since: dict[str, float] = field(default_factory=dict)
    given_up: bool = False
    _task: asyncio.Task[None] | None = None

    async def poll(self) -> None:
        """One check: update what fails, and give up once a part failed too long."""
        try:
            results = await asyncio.wait_for(self.check(), timeout=max(self.interval, 5.0))
        except Exception as exc:  # the check itself failing counts as the check failing
            log.warning("liveness check failed", extra={"action": "liveness", "error": repr(exc)})
            results = {"check": False}
        now = self.clock()
        for part, ok in results.items():
            if ok:
                self.failing_since.pop(part, None)
            else:
                self.failing_since.setdefault(part, now)
        for part in set(self.failing_since) - set(results):
            del self.failing_since[part]
        if self.given_up or not self.failing_since:
            return
        longest = now - min(self.failing_since.values())
        if longest >= self.give_up_after:
            self.given_up = True
            log.error(
                "giving up: own parts failed too long, exiting to be restarted",
                extra={
                    "action": "liveness_give_up",
                    "failing": sorted(self.failing_since),
                    "failing_seconds": round(longest, 1),
                },
            )
            self.on_give_up()

    def report(self) -> tuple[int, dict[str, Any]]:
        """The status code and body of ``/health``."""
        if not self.failing_since:
            return 200, {"status": "ok"}
        longest = self.clock() - min(self.failing_since.values())
        body = {
            "status": "unhealthy" if self.given_up else "recovering",
            "failing": sorted(self.failing_since),
            "failingForSeconds": round(longest, 1),
            "giveUpAfterSeconds": self.give_up_after,
        }
        return (503 if self.given_up else 200), body

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="liveness")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.poll()
