"""The platform a chaos run breaks: private RabbitMQ, PostgreSQL and MongoDB, a local SMTP
sink, and the real stack (2 scheduler replicas, 3 workers) under the supervisor that
``make dev`` uses, so a killed service comes back by itself.

:meth:`ChaosPlatform.close` stops everything it started, also after a failure: paused
processes get SIGCONT first, then the stack (supervised), then the infrastructure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import httpx

from jobs_testing.infra import server_port
from jobs_testing.plugin import SmtpSink, running_smtp_sink
from jobs_testing.private_infra import PrivateMongo, PrivatePostgres, PrivateRabbit
from jobs_testing.stack import Stack, StackConfig
from jobs_testing.supervisor import Supervisor, describe_exit, supervise_stack
from jobs_testing.team_handlers import TEAM_MODULE, TEAM_TYPE

from .knobs import Knobs

DATABASE = "jobs"


@dataclass(frozen=True)
class SupervisorEvent:
    at: datetime
    text: str


@dataclass
class ChaosPlatform:
    knobs: Knobs
    run_dir: Path
    rabbit: PrivateRabbit = field(default_factory=PrivateRabbit)
    postgres: PrivatePostgres = field(default_factory=PrivatePostgres)
    mongo: PrivateMongo | None = None
    mongo_url: str = ""
    sink: SmtpSink | None = None
    stack: Stack | None = None
    supervisor: Supervisor | None = None
    events: list[SupervisorEvent] = field(default_factory=list)
    paused: set[int] = field(default_factory=set)
    _sink_context: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    # Starting

    async def start(self) -> None:
        """Infrastructure first, then the stack; every service ready before returning."""
        started = time.monotonic()
        await asyncio.to_thread(self.rabbit.start)
        await asyncio.to_thread(self.postgres.start)
        await self._create_database()
        self.mongo_url = os.environ.get("MONGO_URL", "")
        if not self.mongo_url:
            self.mongo = PrivateMongo()
            await asyncio.to_thread(self.mongo.start)
            self.mongo_url = self.mongo.url
        self.sink = self._sink_context.enter_context(running_smtp_sink())
        self.stack = Stack(self._config(), self.run_dir / "logs")
        self.supervisor = supervise_stack(self.stack, report=self._report)
        self.supervisor.start()
        await asyncio.to_thread(self.stack.wait_ready, 180.0, None, restarting=True)
        await self._team_type_known()
        print(
            f"platform ready in {time.monotonic() - started:.0f} s: RabbitMQ {self.rabbit.node} "
            f"(:{self.rabbit.amqp_port}, management :{self.rabbit.management_port}), "
            f"PostgreSQL :{self.postgres.port}, MongoDB {self.mongo_url}"
            + (" (nx-27017 stand-in)" if self.mongo else " (MONGO_URL: not stopped)")
            + f", SMTP sink :{self.sink.port}; logs in {self.run_dir / 'logs'}",
            flush=True,
        )

    async def _team_type_known(self, timeout: float = 60.0) -> None:
        """The registry learned the team's type from the worker that loads it (else the
        load's ``team`` requests would be refused as an unknown type)."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(base_url=self.gateway_url, timeout=10) as client:
            token = (
                await client.post(
                    "/auth/login", json={"email": "user@test.com", "password": "user123"}
                )
            ).json()["token"]
            while True:
                answer = await client.get(
                    "/api/job-types", headers={"Authorization": f"Bearer {token}"}
                )
                types = {t["type"] for t in answer.json().get("types", [])}
                if TEAM_TYPE in types:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{TEAM_TYPE} never reached the type registry")
                await asyncio.sleep(0.2)

    async def _create_database(self) -> None:
        connection = await asyncpg.connect(self.postgres.url)
        try:
            await connection.execute(f'CREATE DATABASE "{DATABASE}"')
        finally:
            await connection.close()

    @property
    def database_url(self) -> str:
        return self.postgres.url_for(DATABASE)

    def _config(self) -> StackConfig:
        assert self.sink is not None
        knobs = self.knobs
        return StackConfig(
            database_url=self.database_url,
            amqp_url=self.rabbit.amqp_url,
            mongo_url=self.mongo_url,
            mongo_db="chaos",
            smtp_host=self.sink.host,
            smtp_port=self.sink.port,
            artifacts_dir=str(self.run_dir / "artifacts"),
            gateway_port=server_port(),
            submission_port=server_port(),
            scheduler_port=server_port(),
            dashboard_port=server_port(),
            worker_ports=tuple(server_port() for _ in range(knobs.workers)),
            workers=knobs.workers,
            # The team's module on the first worker only: its type goes to the type's lane.
            worker_env=({"WORKER_HANDLER_MODULES": TEAM_MODULE},),
            schedulers=knobs.schedulers,
            scheduler_ports=tuple(server_port() for _ in range(knobs.schedulers)),
            environment="development",  # the demo logins are seeded only there
            extra_env={
                "SCHEDULER_LEASE_SECONDS": str(knobs.lease_seconds),
                # Retries of lost attempts and of the load's failing jobs come quickly.
                "SCHEDULER_RETRY_BASE_DELAY_MS": "200",
                "SCHEDULER_RETRY_MAX_DELAY_MS": "1000",
                "WORKER_DRAIN_TIMEOUT": "5",
                # One client submits everything from one address: no request limits, no email
                # quota (the integration tests exercise them).
                "GATEWAY_API_REQUESTS_PER_MINUTE": "0",
                "GATEWAY_LOGIN_ATTEMPTS_PER_ACCOUNT_PER_MINUTE": "1000",
                "GATEWAY_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": "10000",
                "SUBMISSION_EMAIL_QUOTA": "0",
                **({"PYTHONPATH": knobs.services_pythonpath} if knobs.services_pythonpath else {}),
            },
        )

    def _report(self, message: str) -> None:
        line = message.splitlines()[0]
        self.events.append(SupervisorEvent(datetime.now(UTC), line))
        print(f"  [supervisor] {line}", flush=True)

    # Processes

    @property
    def smtp_sink(self) -> SmtpSink:
        assert self.sink is not None
        return self.sink

    @property
    def gateway_url(self) -> str:
        assert self.stack is not None
        return self.stack.services["gateway"].url

    def names(self, prefix: str) -> list[str]:
        assert self.stack is not None
        return [name for name in self.stack.services if name.startswith(prefix)]

    def pid(self, name: str) -> int | None:
        assert self.supervisor is not None
        process = self.supervisor.process(name)
        if process is None or process.poll() is not None:
            return None
        return process.pid

    def service_of_pid(self, pid: int) -> str | None:
        assert self.stack is not None
        for name in self.stack.services:
            if self.pid(name) == pid:
                return name
        return None

    def pause(self, pid: int) -> None:
        self.paused.add(pid)
        os.kill(pid, signal.SIGSTOP)

    def resume(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        self.paused.discard(pid)

    async def wait_ready(self, timeout: float, only: list[str] | None = None) -> list[str]:
        """Wait until every service (or ``only``) answers /ready; the ones that did not."""
        assert self.stack is not None
        stack = self.stack
        try:
            await asyncio.to_thread(stack.wait_ready, timeout, only, restarting=True)
        except TimeoutError:
            return await asyncio.to_thread(self.not_ready, only)
        return []

    def not_ready(self, only: list[str] | None = None) -> list[str]:
        assert self.stack is not None
        missing = []
        with httpx.Client(timeout=3.0) as client:
            for name, service in self.stack.services.items():
                if only is not None and name not in only:
                    continue
                try:
                    ok = client.get(service.url + "/ready").status_code == 200
                except httpx.HTTPError:
                    ok = False
                if not ok:
                    missing.append(name)
        return missing

    async def heal(self, names: list[str]) -> None:
        """Restart services that stayed unready (SIGKILL; the supervisor starts them again),
        so the next round starts from a working platform."""
        for name in names:
            pid = self.pid(name)
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        await self.wait_ready(self.knobs.recover_timeout, names)

    def restarts(self) -> dict[str, int]:
        assert self.stack is not None and self.supervisor is not None
        return {name: self.supervisor.restarts(name) for name in self.stack.services}

    def exits(self) -> dict[str, list[str]]:
        assert self.stack is not None and self.supervisor is not None
        return {
            name: [describe_exit(code) for code in self.supervisor.exits(name)]
            for name in self.stack.services
        }

    # Stopping

    async def close(self) -> None:
        for pid in list(self.paused):
            self.resume(pid)
        if self.supervisor is not None:
            # A stopped broker or database would make the drain wait for nothing.
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._restore_infra)
            await asyncio.to_thread(self.supervisor.stop)
        self._sink_context.close()
        if self.mongo is not None:
            await asyncio.to_thread(self.mongo.close)
        await asyncio.to_thread(self.postgres.close)
        await asyncio.to_thread(self.rabbit.close)

    def _restore_infra(self) -> None:
        if not self.postgres.running():
            self.postgres.start()
        if self.mongo is not None:
            self.mongo.start()
