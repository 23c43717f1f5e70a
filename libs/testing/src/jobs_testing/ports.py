"""Ports for the servers the tests start, never handed out twice on this machine.

A port from ``bind(("127.0.0.1", 0))`` lies in the kernel's ephemeral range: between its pick
and the server's own bind, an outgoing connection of anything on the machine may take it, and
another test process may be handed the very same port. Both happened: a stack's scheduler
found its port taken, exited, and another process answering on that port passed for it
(every job of that stack then waited forever). So ports come from below the ephemeral range
(no outgoing connection takes those) and each is reserved with a file created exclusively in
a directory shared by every test process: a port is reserved until the process that took it
ends (its pid gone), whatever tests ran in between.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import tempfile
import time
from pathlib import Path

RESERVATIONS = Path(tempfile.gettempdir()) / "jobs-test-ports"
# A reservation older than this is taken back even when its pid is alive (a reused pid).
STALE_AFTER_SECONDS = 6 * 3600
_picker = random.Random()


def ephemeral_start() -> int:
    """Where the kernel's ephemeral ports begin (outgoing connections and port-0 binds)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def reserved_port(low: int = 20000) -> int:
    """A port below the ephemeral range that nothing listens on and no test process of this
    machine was handed before (while it lives)."""
    high = max(low + 1000, ephemeral_start())
    RESERVATIONS.mkdir(mode=0o777, exist_ok=True)
    for _ in range(1000):
        port = _picker.randrange(low, high)
        if not _reserve(port):
            continue
        if _bindable(port):
            return port
        # Something outside the tests listens there: keep the reservation, so that nobody
        # tries it again while this process lives.
    raise RuntimeError(f"no free port in {low}-{high}")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _reserve(port: int) -> bool:
    path = RESERVATIONS / str(port)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            if not _stale(path):
                return False
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # two processes may both see it stale: O_EXCL picks one
            continue
        with os.fdopen(fd, "w") as handle:
            handle.write(str(os.getpid()))
        return True
    return False


def _stale(path: Path) -> bool:
    try:
        pid = int(path.read_text() or "0")
        age = time.time() - path.stat().st_mtime
    except (OSError, ValueError):
        return False  # being written right now, or gone: not ours to take
    if age > STALE_AFTER_SECONDS or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
