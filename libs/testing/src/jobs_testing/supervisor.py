"""Keep a set of child processes running, like a small process manager (``make dev``).

A child that exits (crash or kill) is reported (name, exit code or signal, its last log lines)
and started again after an exponential backoff, while the others keep running. :meth:`stop`
stops the children in rank order (lowest first): each rank gets SIGTERM together, then each
child is waited for up to its own bound and killed after it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jobs_testing.stack import Stack


@dataclass(frozen=True)
class Backoff:
    """Delay before restart number ``failures`` (1, 2, ...): initial, doubling, capped."""

    initial: float = 0.5
    maximum: float = 30.0
    # A child that stayed up this long before exiting starts again from ``initial``.
    reset_after: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.maximum, self.initial * 2.0 ** max(0, failures - 1))


@dataclass
class Child:
    name: str
    spawn: Callable[[], subprocess.Popen[bytes]]
    stop_rank: int = 0
    stop_timeout: float = 10.0
    tail: Callable[[], str] = lambda: ""


@dataclass
class _State:
    child: Child
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    restarts: int = 0
    exits: list[int] = field(default_factory=list)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-returncode).name}"
        return f"signal {-returncode}"
    return f"exit code {returncode}"


class Supervisor:
    def __init__(
        self,
        children: Sequence[Child],
        *,
        backoff: Backoff | None = None,
        report: Callable[[str], None] | None = None,
        interval: float = 0.1,
    ) -> None:
        self.backoff = backoff or Backoff()
        self.report = report or (lambda message: print(message, flush=True))
        self.interval = interval
        self._states = {child.name: _State(child) for child in children}
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    # Monitoring

    def start(self) -> None:
        """Start every child, then watch them from a background thread until :meth:`stop`."""
        for state in self._states.values():
            self._spawn(state)
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()

    def _spawn(self, state: _State) -> None:
        state.process = state.child.spawn()
        state.started_at = time.monotonic()
        state.restart_at = None

    def _watch(self) -> None:
        while not self._halt.wait(self.interval):
            self.poll()

    def poll(self) -> None:
        """One pass: report and schedule the children that exited, restart the ones due."""
        now = time.monotonic()
        for state in self._states.values():
            process = state.process
            if process is not None and state.restart_at is None:
                returncode = process.poll()
                if returncode is None:
                    continue
                state.exits.append(returncode)
                if now - state.started_at >= self.backoff.reset_after:
                    state.failures = 0
                state.failures += 1
                delay = self.backoff.delay(state.failures)
                state.restart_at = now + delay
                tail = state.child.tail()
                self.report(
                    f"{state.child.name} exited ({describe_exit(returncode)}); "
                    f"restarting in {delay:g} s" + (f"; last lines:\n{tail}" if tail else "")
                )
            elif state.restart_at is not None and now >= state.restart_at:
                state.restarts += 1
                self._spawn(state)
                self.report(f"{state.child.name} restarted (restart {state.restarts})")

    def process(self, name: str) -> subprocess.Popen[bytes] | None:
        return self._states[name].process

    def restarts(self, name: str) -> int:
        return self._states[name].restarts

    def exits(self, name: str) -> list[int]:
        return list(self._states[name].exits)

    # Stopping

    def stop(self) -> dict[str, int]:
        """Stop watching, then stop the children rank by rank; returns their exit codes."""
        self._halt.set()
        if self._thread is not None:
            self._thread.join()
        codes: dict[str, int] = {}
        for rank in sorted({s.child.stop_rank for s in self._states.values()}):
            group = [s for s in self._states.values() if s.child.stop_rank == rank]
            signalled = time.monotonic()
            for state in group:
                state.restart_at = None
                if state.process is not None and state.process.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        state.process.send_signal(signal.SIGTERM)
            for state in group:
                if state.process is None:
                    continue
                left = signalled + state.child.stop_timeout - time.monotonic()
                try:
                    codes[state.child.name] = state.process.wait(timeout=max(0.0, left))
                except subprocess.TimeoutExpired:
                    self.report(
                        f"{state.child.name} still running after "
                        f"{state.child.stop_timeout:g} s: killed"
                    )
                    state.process.kill()
                    codes[state.child.name] = state.process.wait()
        return codes


def stop_rank(name: str) -> int:
    """The gateway first (no new requests), then the workers (they drain), then the rest."""
    if name == "gateway":
        return 0
    if name.startswith("worker"):
        return 1
    return 2


def supervise_stack(
    stack: Stack,
    *,
    backoff: Backoff | None = None,
    report: Callable[[str], None] | None = None,
    stop_timeout: float = 15.0,
) -> Supervisor:
    """A supervisor over every service of ``stack`` (start it with :meth:`Supervisor.start`).

    A restart goes through :meth:`Stack.start_service`, so ``stack.services[name].process``
    is always the live process and :meth:`Stack.wait_ready` and :meth:`Stack.tail` still work.
    A worker's bound is its drain timeout (``WORKER_DRAIN_TIMEOUT``, default 30 s) plus 10 s.
    """
    children = []
    for service in stack.services.values():
        timeout = stop_timeout
        if service.name.startswith("worker"):
            drain = service.env.get("WORKER_DRAIN_TIMEOUT") or os.environ.get(
                "WORKER_DRAIN_TIMEOUT", "30"
            )
            timeout = float(drain) + 10.0

        def spawn(name: str = service.name) -> subprocess.Popen[bytes]:
            process = stack.start_service(name).process
            assert process is not None
            return process

        def tail(name: str = service.name) -> str:
            return stack.tail(name, lines=10)

        children.append(
            Child(service.name, spawn, stop_rank(service.name), timeout, tail),
        )
    return Supervisor(children, backoff=backoff, report=report)
