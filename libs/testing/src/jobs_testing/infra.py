"""Where the test dependencies come from, in order: the URL in the environment; else a
throwaway container through testcontainers when a Docker engine answers; else the local
default on 127.0.0.1 (MongoDB: the wire-compatible ``nx-27017`` server, started here).

Each resolver reports which source it used (``source``), and the session prints it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from jobs_testing.ports import reserved_port


@dataclass
class Resolved:
    url: str
    source: str
    _cleanup: list[Any] = field(default_factory=list)

    def close(self) -> None:
        for item in reversed(self._cleanup):
            with contextlib.suppress(Exception):
                item()


def docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        result = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def free_port() -> int:
    """A port for a server a test starts (:mod:`jobs_testing.ports`): below the ephemeral
    range, never handed to two test processes of this machine."""
    return reserved_port()


def server_port(low: int = 20000) -> int:
    """A port for a server that stops and starts again on it (a chaos fault, a restart): the
    same rule as :func:`free_port`, from ``low`` up."""
    return reserved_port(low)


def wait_for_port(host: str, port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{host}:{port} did not open within {timeout}s")


def resolve_postgres() -> Resolved:
    if url := os.environ.get("POSTGRES_URL"):
        return Resolved(url, "environment POSTGRES_URL")
    if docker_answers():
        from testcontainers.postgres import PostgresContainer

        container = PostgresContainer("postgres:16-alpine", driver=None).start()
        return Resolved(container.get_connection_url(), "testcontainers", [container.stop])
    return Resolved("postgresql://postgres@127.0.0.1:5432/postgres", "local 127.0.0.1:5432")


def resolve_rabbitmq() -> tuple[Resolved, str]:
    """The AMQP URL and the management API base URL."""
    if url := os.environ.get("AMQP_URL"):
        management = os.environ.get("RABBITMQ_MANAGEMENT_URL", "http://guest:guest@127.0.0.1:15672")
        return Resolved(url, "environment AMQP_URL"), management
    if docker_answers():
        from testcontainers.rabbitmq import RabbitMqContainer

        container = RabbitMqContainer("rabbitmq:3.13-management").start()
        host = container.get_container_host_ip()
        amqp = f"amqp://guest:guest@{host}:{container.get_exposed_port(5672)}/"
        management = f"http://guest:guest@{host}:{container.get_exposed_port(15672)}"
        return Resolved(amqp, "testcontainers", [container.stop]), management
    return (
        Resolved("amqp://guest:guest@127.0.0.1:5672/", "local 127.0.0.1:5672"),
        "http://guest:guest@127.0.0.1:15672",
    )


def resolve_mongo() -> Resolved:
    if url := os.environ.get("MONGO_URL"):
        return Resolved(url, "environment MONGO_URL")
    if docker_answers():
        from testcontainers.mongodb import MongoDbContainer

        container = MongoDbContainer("mongo:7").start()
        return Resolved(container.get_connection_url(), "testcontainers", [container.stop])
    return start_mongo_stand_in()


def start_mongo_stand_in() -> Resolved:
    """Start the wire-compatible nx-27017 server in memory on a free port."""
    # .venv/bin/pytest runs without the venv on PATH: look next to the interpreter too.
    executable = shutil.which("nx-27017") or shutil.which(
        "nx-27017", path=os.path.dirname(sys.executable)
    )
    if executable is None:
        raise RuntimeError("no MONGO_URL, no Docker engine and no nx-27017 on PATH")
    port = free_port()
    # nx-27017 refuses to start while another instance holds its default PID file, so each
    # stand-in gets a PID and log file of its own (concurrent suites each run their own).
    workdir = tempfile.mkdtemp(prefix="nx-27017-")
    process = subprocess.Popen(
        [
            executable,
            "--db",
            "memory",
            "-p",
            str(port),
            "--pid-file",
            os.path.join(workdir, "nx-27017.pid"),
            "--log-file",
            os.path.join(workdir, "nx-27017.log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port("127.0.0.1", port)

    def stop() -> None:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)

    return Resolved(f"mongodb://127.0.0.1:{port}", f"nx-27017 stand-in on :{port}", [stop])
