"""What every asyncio task awaits, printed shortly before pytest-timeout fails a test.

pytest-timeout dumps the threads' stacks, which for an async test shows only the event loop
waiting in ``select``: a hang in a task (a query or an AMQP call that never answers) names no
line. A test whose setup, call or teardown runs past nine tenths of its timeout gets the stack
of every pending task printed into its captured output, so the report of a timeout says where
each task waits."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

DUMP_AT = 0.9  # of the test's timeout


def awaited_frames(coroutine: Any) -> Iterator[FrameType]:
    """The frames of a coroutine and of what it awaits, outermost first (a task's own
    ``get_stack`` stops at its outer coroutine)."""
    while coroutine is not None:
        frame = next(
            (
                getattr(coroutine, a)
                for a in ("cr_frame", "ag_frame", "gi_frame")
                if hasattr(coroutine, a)
            ),
            None,
        )
        if frame is not None:
            yield frame
        coroutine = next(
            (
                getattr(coroutine, a)
                for a in ("cr_await", "ag_await", "gi_yieldfrom")
                if getattr(coroutine, a, None) is not None
            ),
            None,
        )


def pending_task_stacks() -> str:
    """The stack of every pending asyncio task, of every loop (read from another thread:
    best effort, for diagnosis only)."""
    out = io.StringIO()
    try:
        tasks = list(asyncio.tasks._all_tasks)  # type: ignore[attr-defined]
    except RuntimeError:  # the set changed while it was read
        return "asyncio tasks could not be listed\n"
    for task in tasks:
        if task.done():
            continue
        out.write(f"--- {task.get_name()}: {task.get_coro()!r}\n")
        for frame in awaited_frames(task.get_coro()):
            out.write("".join(traceback.format_stack(frame, limit=1)))
    return out.getvalue()


def _timeout_of(item: pytest.Item) -> float | None:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    try:
        value = item.config.getini("timeout")  # pytest-timeout's ini option
    except ValueError:  # pytest-timeout not installed
        return None
    return float(value) if value else None


@contextlib.contextmanager
def dump_if_slow(item: pytest.Item, phase: str) -> Iterator[None]:
    """Print the pending tasks if ``phase`` of ``item`` runs past nine tenths of its timeout
    (pytest-timeout counts setup, call and teardown each on its own)."""
    timeout = _timeout_of(item)
    timer = None
    if timeout:

        def dump() -> None:
            sys.stderr.write(
                f"\n+++ {item.nodeid} still in {phase} after {DUMP_AT * timeout:.0f} s; "
                f"pending asyncio tasks:\n{pending_task_stacks()}"
            )

        timer = threading.Timer(DUMP_AT * timeout, dump)
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with dump_if_slow(item, "setup"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with dump_if_slow(item, "call"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    # a fixture's teardown that hangs (a service that does not stop) is named too
    with dump_if_slow(item, "teardown"):
        yield
