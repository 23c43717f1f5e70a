"""The ports the tests' servers get (``jobs_testing.ports``): below the kernel's ephemeral
range, never handed to two live test processes, taken back once their process is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs_testing import ports

pytestmark = pytest.mark.unit

CHILD = """
import json, pathlib, sys
from jobs_testing import ports
ports.RESERVATIONS = pathlib.Path(sys.argv[1])
print(json.dumps([ports.reserved_port() for _ in range(50)]))
"""


@pytest.fixture(autouse=True)
def own_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(ports, "RESERVATIONS", tmp_path)
    return tmp_path


def test_ports_lie_below_the_ephemeral_range_and_are_never_handed_out_twice(
    own_directory: Path,
) -> None:
    picked = [ports.reserved_port(low=30000) for _ in range(200)]
    assert len(set(picked)) == 200
    assert all(30000 <= port < ports.ephemeral_start() for port in picked)
    # Every port handed out is reserved; a port something outside listened on when it was
    # tried stays reserved too (no one tries it again), so there may be more files.
    reserved = {int(p.name) for p in own_directory.iterdir()}
    assert set(picked) <= reserved
    assert {p.read_text() for p in own_directory.iterdir()} == {str(os.getpid())}


def test_a_live_processs_ports_stay_reserved_and_a_dead_ones_come_back(
    own_directory: Path,
) -> None:
    # Another process reserves ports in this directory, then ends.
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(own_directory)],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = set(json.loads(child.stdout))
    assert len(theirs) == 50
    # Their pid is gone: each of their ports may be taken again.
    for port in theirs:
        assert ports._reserve(port)
    # A live process's reservation is not taken.
    live = own_directory / "20001"
    live.write_text(str(os.getppid()))
    assert not ports._reserve(20001)
