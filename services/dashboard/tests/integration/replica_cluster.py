"""A throwaway PostgreSQL primary with a hot standby streaming from it, for the read-replica test.

Debian's server binaries (the newest under ``/usr/lib/postgresql/*/bin``): ``initdb`` a
primary (``wal_level=replica``, trust on 127.0.0.1, whose default ``pg_hba.conf`` admits
replication connections there), ``pg_basebackup -R`` a copy of it (``standby.signal`` and
``primary_conninfo`` written for us) and start that as a hot standby. Both listen on free ports
on 127.0.0.1 with their sockets and data in one temporary directory, removed by ``close()``.
PostgreSQL refuses to run as root: under root the binaries run as the ``postgres`` OS user
(``subprocess``'s ``user=``, no sudo), else as the current user.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from jobs_testing.infra import free_port, wait_for_port
from jobs_testing.private_infra import Managed, postgres_bin

OS_USER_UNDER_ROOT = "postgres"


class ReplicaCluster(Managed):
    """``start()``: a primary and a hot standby replaying its WAL; ``close()``: both stopped
    and their files removed (safe to call twice). A context manager."""

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.primary_port = free_port()
        self.standby_port = free_port()
        self.directory: Path | None = None
        self._started: list[Path] = []
        root = os.geteuid() == 0
        self._account = pwd.getpwnam(OS_USER_UNDER_ROOT) if root else None

    def primary_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.primary_port}/{database}"

    def standby_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.standby_port}/{database}"

    def _path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / name

    def _run(self, *args: str, timeout: float = 120.0) -> None:
        account = self._account
        done = subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            cwd=self.directory,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8", "PGTZ": "UTC"},
            capture_output=True,
            timeout=timeout,
            check=False,
            user=None if account is None else account.pw_uid,
            group=None if account is None else account.pw_gid,
            extra_groups=None if account is None else [],
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({done.returncode}): "
                f"{done.stderr.decode(errors='replace')[-2000:]}"
            )

    def _start_server(self, data: Path, port: int) -> None:
        options = " ".join(
            [
                f"-p {port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.directory}",
                "-c wal_level=replica",
                "-c max_wal_senders=4",
                "-c hot_standby=on",
                "-c fsync=off",  # a throwaway cluster: the OS does not crash under it
                "-c timezone=UTC",
                "-c max_connections=100",
            ]
        )
        log = self._path(f"{data.name}.log")
        self._run("pg_ctl", "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        self._started.append(data)
        wait_for_port("127.0.0.1", port, timeout=30)

    def start(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="dashboard-replica-"))
        if self._account is not None:
            os.chown(self.directory, self._account.pw_uid, self._account.pw_gid)
        primary, standby = self._path("primary"), self._path("standby")
        self._run("initdb", "-D", str(primary), "-U", "postgres", "--auth=trust", "--encoding=UTF8")
        self._start_server(primary, self.primary_port)
        self._run(
            "pg_basebackup",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.primary_port),
            "-U",
            "postgres",
            "-D",
            str(standby),
            "-R",  # standby.signal + primary_conninfo in postgresql.auto.conf
            "-X",
            "stream",
            "-c",
            "fast",
        )
        self._start_server(standby, self.standby_port)

    def close(self) -> None:
        for data in reversed(self._started):
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop", timeout=60)
        self._started.clear()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
