"""Dependencies of one's own that a test may break: a RabbitMQ node, a PostgreSQL cluster and
a MongoDB stand-in, each on its own ports with its data in a temporary directory.

The chaos suite (scripts/chaos.py, tests/chaos) stops and restarts these while the platform
runs; the machine's shared PostgreSQL (:5432) and RabbitMQ (:5672) serve other suites at the
same time and are never touched. Everything listens on 127.0.0.1 only.

- :class:`PrivateRabbit`: a node of its own (``chaos-<random>@localhost``) with its own AMQP,
  distribution and management ports, mnesia and log directories, plugins file (management
  only) and Erlang cookie (``$HOME`` points into its directory, so ``rabbitmqctl`` finds the
  cookie there and no shared node can be addressed by mistake).
- :class:`PrivatePostgres`: ``initdb`` into its directory, run as the ``postgres`` OS user
  (PostgreSQL refuses root), trust authentication on 127.0.0.1.
- :class:`PrivateMongo`: the ``nx-27017`` stand-in with its data in files, so a kill and a
  restart keep what was written.

Each ``stop()`` is safe to call twice and removes the directory; use them as context managers.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

import httpx

from jobs_testing.infra import server_port, wait_for_port

RABBITMQ_BIN = Path("/usr/lib/rabbitmq/bin")
POSTGRES_BIN_ROOT = Path("/usr/lib/postgresql")


class InfraError(RuntimeError):
    """A private dependency did not start or stop as asked."""


class Managed:
    """Context manager support: ``start()`` on enter, ``close()`` (stopped, files removed)
    on exit."""

    def start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# --- RabbitMQ ---------------------------------------------------------------------------------


class PrivateRabbit(Managed):
    """A RabbitMQ node of its own: ``start()``, ``stop_app()``/``start_app()`` (the fault),
    ``close_all_connections()`` (management API), ``stop()`` (clean shutdown, files removed)."""

    def __init__(self, *, startup_timeout: float = 90.0) -> None:
        self.startup_timeout = startup_timeout
        self.node = f"chaos-{secrets.token_hex(4)}@localhost"
        self.amqp_port = server_port()
        self.dist_port = server_port()
        self.management_port = server_port()
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def amqp_url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.amqp_port}/"

    @property
    def management_url(self) -> str:
        """Base URL of the management API, credentials included (as ``RabbitServer`` takes)."""
        return f"http://guest:guest@127.0.0.1:{self.management_port}"

    @property
    def log_path(self) -> Path:
        assert self.directory is not None
        return self.directory / "log" / "node.log"

    def _env(self) -> dict[str, str]:
        assert self.directory is not None
        d = self.directory
        return os.environ | {
            # The Erlang cookie is read from $HOME: this node's own, for it and rabbitmqctl.
            "HOME": str(d),
            "RABBITMQ_CONF_ENV_FILE": str(d / "rabbitmq-env.conf"),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.amqp_port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_CONFIG_FILE": str(d / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(d / "advanced.config"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(d / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(d / "mnesia"),
            "RABBITMQ_LOG_BASE": str(d / "log"),
            "RABBITMQ_LOGS": str(d / "log" / "node.log"),
            "RABBITMQ_PID_FILE": str(d / "node.pid"),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "ERL_FLAGS": "-kernel inet_dist_use_interface {127,0,0,1}",
        }

    def _write_files(self, directory: Path) -> None:
        cookie = directory / ".erlang.cookie"
        cookie.write_text("".join(secrets.choice(string.ascii_uppercase) for _ in range(32)))
        cookie.chmod(0o400)
        (directory / "rabbitmq-env.conf").write_text("# this node's settings come from env\n")
        (directory / "enabled_plugins").write_text("[rabbitmq_management].\n")
        (directory / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.amqp_port}\n"
            f"management.tcp.ip = 127.0.0.1\n"
            f"management.tcp.port = {self.management_port}\n"
            "log.file.level = info\n"
            # Queue depths in the management API at most a second old (default 5 s).
            "collect_statistics_interval = 1000\n"
        )
        for sub in ("mnesia", "log"):
            (directory / sub).mkdir()

    def start(self) -> None:
        if self.process is not None:
            return
        self.directory = Path(tempfile.mkdtemp(prefix="chaos-rabbit-"))
        self._write_files(self.directory)
        out = (self.directory / "stdout.log").open("ab")
        self.process = subprocess.Popen(
            [str(RABBITMQ_BIN / "rabbitmq-server")],
            env=self._env(),
            cwd=self.directory,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        self.wait_started(self.startup_timeout)

    def ctl(self, *args: str, timeout: float = 60.0) -> str:
        """``rabbitmqctl -n <this node> args...``; raises :class:`InfraError` when it fails."""
        try:
            done = subprocess.run(
                [str(RABBITMQ_BIN / "rabbitmqctl"), "-n", self.node, *args],
                env=self._env(),
                cwd=self.directory,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise InfraError(f"rabbitmqctl {' '.join(args)}: no answer in {timeout} s") from exc
        if done.returncode != 0:
            raise InfraError(
                f"rabbitmqctl {' '.join(args)} failed ({done.returncode}): "
                f"{done.stderr.decode(errors='replace')[-2000:]}\n{_tail(self.log_path)}"
            )
        return done.stdout.decode(errors="replace")

    def stop_app(self) -> None:
        """The broker stops (every connection dropped, ports closed); the Erlang node stays."""
        self.ctl("stop_app")

    def start_app(self) -> None:
        self.ctl("start_app", timeout=self.startup_timeout)
        self.wait_started(self.startup_timeout)

    def wait_started(self, timeout: float) -> None:
        """Until the AMQP port accepts connections and the management API answers (the node
        opens its listeners last); raises when the node exits or the time is up."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise InfraError(
                    f"{self.node} exited ({self.process.returncode}):\n{_tail(self.log_path)}"
                )
            with contextlib.suppress(OSError, httpx.HTTPError):
                socket.create_connection(("127.0.0.1", self.amqp_port), timeout=0.5).close()
                if self.api("GET", "/overview").status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise InfraError(f"{self.node} not started in {timeout} s:\n{_tail(self.log_path)}")
            time.sleep(0.2)

    def api(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        """One request to this node's management API (``path`` after ``/api``)."""
        with httpx.Client(
            base_url=f"http://127.0.0.1:{self.management_port}/api",
            auth=("guest", "guest"),
            timeout=10.0,
        ) as client:
            return client.request(method, path, **kwargs)  # type: ignore[arg-type]

    def connections(self) -> list[str]:
        response = self.api("GET", "/connections", params={"columns": "name"})
        response.raise_for_status()
        return [item["name"] for item in response.json()]

    def connections_named(self, fragment: str) -> list[str]:
        """The connections whose client-given name (``connection_name``) contains ``fragment``."""
        response = self.api("GET", "/connections")
        response.raise_for_status()
        return [
            item["name"]
            for item in response.json()
            if fragment in str(item.get("user_provided_name") or "")
            or fragment in str((item.get("client_properties") or {}).get("connection_name", ""))
        ]

    def close_connections(self, names: list[str], reason: str = "test: connection cut") -> int:
        """Close these connections through the management API; how many were closed."""
        closed = 0
        for name in names:
            response = self.api(
                "DELETE", f"/connections/{quote(name, safe='')}", headers={"X-Reason": reason}
            )
            if response.status_code in (200, 204):
                closed += 1
        return closed

    def close_all_connections(self, reason: str = "chaos: every connection closed") -> int:
        """Close every client connection through the management API; how many were closed."""
        closed = 0
        for name in self.connections():
            response = self.api(
                "DELETE", f"/connections/{quote(name, safe='')}", headers={"X-Reason": reason}
            )
            if response.status_code in (200, 204):
                closed += 1
        return closed

    def queues(self, vhost: str = "/") -> list[dict[str, object]]:
        """Every queue of ``vhost`` with its depth (``messages``) and ``consumers``; right
        after a (re)start a queue may lack ``messages`` until its statistics are collected."""
        response = self.api(
            "GET",
            f"/queues/{quote(vhost, safe='')}",
            params={"columns": "name,messages,messages_ready,messages_unacknowledged,consumers"},
        )
        response.raise_for_status()
        queues: list[dict[str, object]] = response.json()
        return queues

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                with contextlib.suppress(InfraError):
                    self.ctl("stop", timeout=60)
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(self.process.pid, signal.SIGKILL)
                    self.process.wait(timeout=10)
            self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def close(self) -> None:
        self.stop()


# --- PostgreSQL -------------------------------------------------------------------------------


def postgres_bin() -> Path:
    versions = sorted(
        (p for p in POSTGRES_BIN_ROOT.glob("*/bin") if (p / "pg_ctl").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not versions:
        raise InfraError(f"no PostgreSQL server binaries under {POSTGRES_BIN_ROOT}")
    return versions[-1]


class PrivatePostgres(Managed):
    """A PostgreSQL cluster of its own: ``start()`` (initdb on first call), ``stop()`` /
    ``start()`` again (the fault: data kept), ``close()`` (stopped and files removed)."""

    def __init__(self, *, os_user: str = "postgres", mode: str = "fast") -> None:
        self.os_user = os_user
        self.mode = mode  # pg_ctl stop mode: smart, fast or immediate
        self.port = server_port()
        self.bin = postgres_bin()
        self.directory: Path | None = None

    @property
    def url(self) -> str:
        """The ``postgres`` database as the ``postgres`` role (trust on 127.0.0.1)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url_for(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    @property
    def data(self) -> Path:
        assert self.directory is not None
        return self.directory / "data"

    def _run(self, *args: str, timeout: float = 120.0) -> None:
        account = pwd.getpwnam(self.os_user)
        root = os.geteuid() == 0  # PostgreSQL refuses to run as root: run as os_user
        done = subprocess.run(
            list(args),
            cwd=self.directory,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8", "PGTZ": "UTC"},
            capture_output=True,
            timeout=timeout,
            check=False,
            user=account.pw_uid if root else None,
            group=account.pw_gid if root else None,
            extra_groups=[] if root else None,
        )
        if done.returncode != 0:
            raise InfraError(
                f"{' '.join(args)} failed ({done.returncode}): "
                f"{done.stderr.decode(errors='replace')[-2000:]}\n{_tail(self._log)}"
            )

    @property
    def _log(self) -> Path:
        assert self.directory is not None
        return self.directory / "server.log"

    def _initdb(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="chaos-pg-"))
        account = pwd.getpwnam(self.os_user)
        if os.geteuid() == 0:
            os.chown(self.directory, account.pw_uid, account.pw_gid)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        )

    def start(self) -> None:
        first = self.directory is None
        if first:
            self._initdb()
        for attempt in range(1, 4):
            try:
                self._start_server()
                return
            except InfraError as exc:
                # Its port taken between its pick and this bind: no client knows it yet.
                if not first or "Address already in use" not in str(exc) or attempt == 3:
                    raise
                self.port = server_port()

    def _start_server(self) -> None:
        options = " ".join(
            [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.directory}",
                "-c fsync=off",  # a test cluster: the OS does not crash, the server may
                "-c full_page_writes=off",
                "-c max_connections=200",
                "-c timezone=UTC",
            ]
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self._log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        wait_for_port("127.0.0.1", self.port, timeout=30)

    def running(self) -> bool:
        return self.directory is not None and (self.data / "postmaster.pid").exists()

    def stop(self) -> None:
        """Stop the server (``mode``: fast disconnects every client); the data stays."""
        if self.running():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", self.mode, "-w", "stop")

    def close(self) -> None:
        with contextlib.suppress(InfraError):
            self.stop()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


# --- MongoDB (the nx-27017 stand-in) ----------------------------------------------------------


def _nx_27017() -> str:
    executable = shutil.which("nx-27017") or shutil.which(
        "nx-27017", path=os.path.dirname(sys.executable)
    )
    if executable is None:
        raise InfraError("nx-27017 is not installed (the MongoDB stand-in)")
    return executable


class PrivateMongo(Managed):
    """The nx-27017 stand-in on a port of its own with its data in files: ``kill()`` (SIGKILL)
    and ``start()`` again keep the data; ``close()`` stops it and removes the files."""

    def __init__(self) -> None:
        self.port = server_port()
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}"

    def start(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="chaos-mongo-"))
            (self.directory / "data").mkdir()
        pid_file = self.directory / "nx-27017.pid"
        pid_file.unlink(missing_ok=True)  # left by a killed instance
        self.process = subprocess.Popen(
            [
                _nx_27017(),
                "--data-dir",
                str(self.directory / "data"),
                "-p",
                str(self.port),
                "--pid-file",
                str(pid_file),
                "--log-file",
                str(self.directory / "nx-27017.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port("127.0.0.1", self.port, timeout=30)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def kill(self) -> None:
        """kill -9: the fault (start() brings it back with the same data and port)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
