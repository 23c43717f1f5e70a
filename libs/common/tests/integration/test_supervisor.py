"""The supervisor behind ``make dev`` over small real child processes (``python -c``).

A child that exits is reported and restarted with growing delays while the others keep
running; :meth:`Supervisor.stop` stops the ranks in order and kills a child that ignores
SIGTERM after its bound.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs_testing.supervisor import Backoff, Child, Supervisor

pytestmark = pytest.mark.integration

# Appends "<name> <event> <time>" to a shared file at start and on SIGTERM, then behaves as
# told: "exit" (code 3 after printing a line), "sleep", or "stubborn" (ignores SIGTERM).
CHILD = r"""
import os, signal, sys, time
name, mode, record = sys.argv[1], sys.argv[2], sys.argv[3]
def note(event):
    with open(record, "a") as f:
        f.write(f"{name} {event} {time.time()}\n")
def on_term(*_):
    note("term")
    time.sleep(0.2)  # a short drain, so a rank that did not wait would show
    sys.exit(0)
note("start")
signal.signal(signal.SIGTERM, signal.SIG_IGN if mode == "stubborn" else on_term)
if mode == "exit":
    print(f"{name} failing on purpose", flush=True)
    sys.exit(3)
while True:
    time.sleep(0.05)
"""


def child(tmp_path: Path, name: str, mode: str, rank: int = 0, timeout: float = 5.0) -> Child:
    log = tmp_path / f"{name}.log"

    def spawn() -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                [sys.executable, "-c", CHILD, name, mode, str(tmp_path / "record")],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def tail() -> str:
        return "\n".join(log.read_text().splitlines()[-5:]) if log.exists() else ""

    return Child(name, spawn, stop_rank=rank, stop_timeout=timeout, tail=tail)


def records(tmp_path: Path, event: str) -> list[tuple[str, float]]:
    path = tmp_path / "record"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(n, float(t)) for n, e, t in (line.split() for line in lines) if e == event]


@pytest.fixture
def reports() -> list[str]:
    return []


@pytest.fixture
def supervisors() -> Iterator[list[Supervisor]]:
    started: list[Supervisor] = []
    yield started
    for supervisor in started:
        supervisor.stop()


def test_an_exited_child_is_restarted_with_growing_delays_and_reported(
    tmp_path: Path, reports: list[str], supervisors: list[Supervisor]
) -> None:
    supervisor = Supervisor(
        [child(tmp_path, "crasher", "exit"), child(tmp_path, "steady", "sleep")],
        backoff=Backoff(initial=0.2, maximum=10, reset_after=60),
        report=reports.append,
        interval=0.02,
    )
    supervisors.append(supervisor)
    supervisor.start()
    steady = supervisor.process("steady")
    assert steady is not None
    deadline = time.monotonic() + 15
    while len([n for n, _ in records(tmp_path, "start") if n == "crasher"]) < 4:
        assert time.monotonic() < deadline, reports
        time.sleep(0.05)

    starts = [t for n, t in records(tmp_path, "start") if n == "crasher"]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Delays 0.2, 0.4, 0.8 s (plus the child's own start-up and exit).
    assert gaps[0] >= 0.2
    assert gaps[1] >= gaps[0] + 0.1, gaps
    assert gaps[2] >= gaps[1] + 0.25, gaps
    assert supervisor.exits("crasher")[:3] == [3, 3, 3]
    exited = [r for r in reports if r.startswith("crasher exited")]
    assert exited[0].startswith("crasher exited (exit code 3); restarting in 0.2 s")
    assert "crasher failing on purpose" in exited[0]  # the last log lines
    assert "restarting in 0.4 s" in exited[1]
    assert any(r.startswith("crasher restarted") for r in reports)
    # The other child kept running, never restarted.
    assert supervisor.process("steady") is steady and steady.poll() is None
    assert supervisor.restarts("steady") == 0
    assert not any(r.startswith("steady") for r in reports)


def test_a_killed_child_is_reported_by_signal_and_comes_back(
    tmp_path: Path, reports: list[str], supervisors: list[Supervisor]
) -> None:
    supervisor = Supervisor(
        [child(tmp_path, "victim", "sleep")],
        backoff=Backoff(initial=0.1),
        report=reports.append,
        interval=0.02,
    )
    supervisors.append(supervisor)
    supervisor.start()
    first = supervisor.process("victim")
    assert first is not None
    first.kill()
    deadline = time.monotonic() + 10
    while supervisor.restarts("victim") < 1:
        assert time.monotonic() < deadline, reports
        time.sleep(0.05)
    second = supervisor.process("victim")
    assert second is not None and second.pid != first.pid and second.poll() is None
    assert reports[0].startswith("victim exited (signal SIGKILL); restarting in 0.1 s")


def test_stop_goes_rank_by_rank_and_kills_a_child_that_ignores_sigterm(
    tmp_path: Path, reports: list[str]
) -> None:
    supervisor = Supervisor(
        [
            child(tmp_path, "other", "sleep", rank=2),
            child(tmp_path, "worker-1", "sleep", rank=1),
            child(tmp_path, "stubborn", "stubborn", rank=2, timeout=0.5),
            child(tmp_path, "gateway", "sleep", rank=0),
            child(tmp_path, "worker-2", "sleep", rank=1),
        ],
        report=reports.append,
    )
    supervisor.start()
    deadline = time.monotonic() + 10
    while len(records(tmp_path, "start")) < 5:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    processes = {n: supervisor.process(n) for n in ("other", "stubborn", "gateway")}

    began = time.monotonic()
    codes = supervisor.stop()
    took = time.monotonic() - began

    terms = records(tmp_path, "term")
    order = [n for n, _ in sorted(terms, key=lambda r: r[1])]
    assert order[0] == "gateway"
    assert sorted(order[1:3]) == ["worker-1", "worker-2"]
    assert order[3:] == ["other"]  # the stubborn one never notes its SIGTERM (ignored)
    at = dict(terms)
    # Each rank waited for the one before (each child drains 0.2 s after SIGTERM); both
    # workers got SIGTERM together.
    assert at["worker-1"] - at["gateway"] >= 0.2
    assert min(at["worker-1"], at["worker-2"]) + 0.2 <= at["other"]
    assert abs(at["worker-1"] - at["worker-2"]) < 0.15
    assert codes["stubborn"] == -9
    assert codes["gateway"] == codes["worker-1"] == codes["other"] == 0
    assert 0.5 <= took < 5
    assert any(r.startswith("stubborn still running after 0.5 s: killed") for r in reports)
    for process in processes.values():
        assert process is not None and process.poll() is not None
    # Nothing was restarted while stopping.
    assert not any("exited" in r for r in reports)
