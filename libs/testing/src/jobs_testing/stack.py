"""Run the whole platform as local processes: used by ``make dev`` and the e2e tests.

Each service is started exactly as a user would start it (``python -m jobs_<service>``) with
its settings in environment variables; :meth:`Stack.wait_ready` polls every ``/ready``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from jobs_common.auth import (
    INTERNAL_TOKEN_HEADER,
    USER_EMAIL_HEADER,
    USER_ID_HEADER,
    USER_ROLE_HEADER,
)
from jobs_testing.infra import free_port


@dataclass(frozen=True)
class StackConfig:
    database_url: str
    amqp_url: str
    mongo_url: str
    mongo_db: str = "jobs_submission"
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 1025
    artifacts_dir: str = "var/artifacts"
    # Fresh secrets per stack (any environment accepts them); `make dev` passes the published
    # development ones so a browser's login survives a restart.
    internal_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    jwt_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    gateway_port: int = 3000
    # The gateway's metrics (its public port answers /metrics with 404): a free port by
    # default, so that stacks running side by side do not collide on it.
    gateway_metrics_port: int = field(default_factory=free_port)
    submission_port: int = 3001
    scheduler_port: int = 8080
    dashboard_port: int = 8081
    worker_base_port: int = 9100
    # Explicit worker ports; when empty, workers take worker_base_port, +1, +2...
    worker_ports: tuple[int, ...] = ()
    workers: int = 2
    # Scheduler replicas: the first on scheduler_port (named "scheduler"), the others
    # ("scheduler-2", ...) on scheduler_ports[index] when given, else on a free port each.
    schedulers: int = 1
    scheduler_ports: tuple[int, ...] = ()
    log_json: bool = True
    environment: str = "development"
    # The web UI's build the gateway serves at / (frontend/dist); None: no UI.
    ui_dir: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    # Environment of each worker (by index, WORKER_-prefixed names): its handler modules, its
    # queues. A worker past the tuple's end gets none.
    worker_env: tuple[dict[str, str], ...] = ()


@dataclass
class ServiceProcess:
    name: str
    module: str
    port: int
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    # Where /metrics is served when not on ``port`` (the gateway's metrics port).
    metrics_port: int | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port or self.port}/metrics"


def service_specs(config: StackConfig) -> list[ServiceProcess]:
    common = {"PYTHONUNBUFFERED": "1", **config.extra_env}

    def env(prefix: str, port: int, **values: object) -> dict[str, str]:
        base = {
            "ENVIRONMENT": config.environment,
            "PORT": port,
            "HOST": "127.0.0.1",
            "LOG_JSON": str(config.log_json).lower(),
            **values,
        }
        return common | {f"{prefix}_{k}": str(v) for k, v in base.items()}

    def scheduler_port(index: int) -> int:
        if index < len(config.scheduler_ports):
            return config.scheduler_ports[index]
        return config.scheduler_port if index == 0 else free_port()

    schedulers = []
    for index in range(max(1, config.schedulers)):
        port = scheduler_port(index)
        schedulers.append(
            ServiceProcess(
                "scheduler" if index == 0 else f"scheduler-{index + 1}",
                "jobs_scheduler",
                port,
                env(
                    "SCHEDULER",
                    port,
                    DATABASE_URL=config.database_url,
                    AMQP_URL=config.amqp_url,
                    INTERNAL_TOKEN=config.internal_token,
                ),
            )
        )
    specs = [
        *schedulers,
        ServiceProcess(
            "submission",
            "jobs_submission",
            config.submission_port,
            env(
                "SUBMISSION",
                config.submission_port,
                MONGO_URL=config.mongo_url,
                MONGO_DB=config.mongo_db,
                AMQP_URL=config.amqp_url,
                INTERNAL_TOKEN=config.internal_token,
                SCHEDULER_URLS=",".join(f"http://127.0.0.1:{s.port}" for s in schedulers),
            ),
        ),
        ServiceProcess(
            "dashboard",
            "jobs_dashboard",
            config.dashboard_port,
            env(
                "DASHBOARD",
                config.dashboard_port,
                DATABASE_URL=config.database_url,
                AMQP_URL=config.amqp_url,
                INTERNAL_TOKEN=config.internal_token,
                SUBMISSION_URL=f"http://127.0.0.1:{config.submission_port}",
                SCHEDULER_URLS=",".join(f"http://127.0.0.1:{s.port}" for s in schedulers),
            ),
        ),
        ServiceProcess(
            "gateway",
            "jobs_gateway",
            config.gateway_port,
            env(
                "GATEWAY",
                config.gateway_port,
                DATABASE_URL=config.database_url,
                JWT_SECRET=config.jwt_secret,
                INTERNAL_TOKEN=config.internal_token,
                SUBMISSION_URL=f"http://127.0.0.1:{config.submission_port}",
                DASHBOARD_URL=f"http://127.0.0.1:{config.dashboard_port}",
                AMQP_URL=config.amqp_url,
                METRICS_PORT=config.gateway_metrics_port,
                **({"UI_DIR": config.ui_dir} if config.ui_dir else {}),
            ),
            metrics_port=config.gateway_metrics_port,
        ),
    ]
    for index in range(config.workers):
        port = (
            config.worker_ports[index]
            if index < len(config.worker_ports)
            else config.worker_base_port + index
        )
        specs.append(
            ServiceProcess(
                f"worker-{index + 1}",
                "jobs_worker",
                port,
                env(
                    "WORKER",
                    port,
                    AMQP_URL=config.amqp_url,
                    DATABASE_URL=config.database_url,
                    SMTP_HOST=config.smtp_host,
                    SMTP_PORT=config.smtp_port,
                    ARTIFACTS_DIR=config.artifacts_dir,
                    # ctx.submit: follow-ups go to the submission service
                    SUBMISSION_URL=f"http://127.0.0.1:{config.submission_port}",
                    INTERNAL_TOKEN=config.internal_token,
                )
                | (config.worker_env[index] if index < len(config.worker_env) else {}),
            )
        )
    return specs


# One built-in type: a worker announces all of its types in one message.
BUILTIN_PROBE = "simulate"


class Stack:
    def __init__(self, config: StackConfig, log_dir: Path) -> None:
        self.config = config
        self.log_dir = log_dir
        self.services = {s.name: s for s in service_specs(config)}

    def start(self, only: list[str] | None = None) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for service in self.services.values():
            if only is not None and service.name not in only:
                continue
            self.start_service(service.name)

    def start_service(self, name: str) -> ServiceProcess:
        service = self.services[name]
        self.log_dir.mkdir(parents=True, exist_ok=True)
        service.log_path = self.log_dir / f"{name}.log"
        log = service.log_path.open("ab")
        service.process = subprocess.Popen(
            [sys.executable, "-m", service.module],
            env=os.environ | service.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return service

    def wait_ready(
        self, timeout: float = 60.0, only: list[str] | None = None, *, restarting: bool = False
    ) -> None:
        """Poll each ``/ready`` until 200; an exited service raises unless ``restarting`` (a
        supervisor starts it again: keep waiting for the new process until the deadline).
        The whole stack (``only`` None) is ready once the built-in types are announced."""
        deadline = time.monotonic() + timeout
        pending = [s for s in self.services.values() if s.process is not None]
        if only is not None:
            pending = [s for s in pending if s.name in only]
        waited = list(pending)
        with httpx.Client(timeout=2.0) as client:
            while pending:
                service = pending[0]
                assert service.process is not None
                if service.process.poll() is not None and not restarting:
                    raise RuntimeError(f"{service.name} exited:\n{self.tail(service.name)}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(service.url + "/ready").status_code == 200:
                        pending.pop(0)
                        continue
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{service.name} not ready:\n{self.tail(service.name)}")
                time.sleep(0.1)
        if only is None:
            self.wait_announced(BUILTIN_PROBE, deadline)
        if restarting:
            return
        # A service whose port was taken exits right after its start-up, and the process that
        # holds the port may answer /ready for it: ready means alive a moment later too.
        time.sleep(0.3)
        for service in waited:
            assert service.process is not None
            if service.process.poll() is not None:
                raise RuntimeError(f"{service.name} exited:\n{self.tail(service.name)}")

    def wait_announced(self, job_type: str, deadline: float) -> None:
        """Wait until the submission service knows ``job_type``: a type is known once a
        worker's announcement reached the registry, a moment after the worker is ready, and a
        submission in between would be refused (422, no worker announced it). Only when a
        worker of the stack loads the built-in types (the entry points)."""
        submission = self.services.get("submission")
        if submission is None or not any(
            s.name.startswith("worker-")
            and s.process is not None
            and s.env.get("WORKER_HANDLER_ENTRY_POINTS", "true").lower() != "false"
            for s in self.services.values()
        ):
            return
        url = f"{submission.url}/internal/v1/job-types/{job_type}/check"
        headers = {
            INTERNAL_TOKEN_HEADER: self.config.internal_token,
            USER_EMAIL_HEADER: "stack@test.com",
            USER_ROLE_HEADER: "admin",
            USER_ID_HEADER: "stack",
        }
        with httpx.Client(timeout=2.0) as client:
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    answer = client.post(url, json={"payload": {}}, headers=headers)
                    if answer.status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"no worker's announcement of {job_type!r} reached the registry:\n"
                        f"{self.tail('submission')}"
                    )
                time.sleep(0.1)

    def stop_service(self, name: str, *, sig: int = signal.SIGTERM, timeout: float = 40.0) -> int:
        service = self.services[name]
        process = service.process
        if process is None or process.poll() is not None:
            return process.returncode if process else 0
        process.send_signal(sig)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def stop(self) -> None:
        for name in reversed(list(self.services)):
            self.stop_service(name)

    def tail(self, name: str, lines: int = 40) -> str:
        path = self.services[name].log_path
        if path is None or not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
