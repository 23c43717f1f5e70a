"""``make dev``: the whole platform as local processes, with demo users and demo data.

Uses the local PostgreSQL and RabbitMQ (scripts/ensure-infra.sh starts them), MongoDB from
MONGO_URL or else the nx-27017 stand-in (data kept in var/mongo), and a local SMTP sink on
:1025 that logs every email the workers send (var/logs/smtp.log). WORKERS=N sets the worker
count (default 2), SCHEDULERS=N the scheduler replicas (default 1, the others on free ports);
DEMO=0 skips the demo data; HANDLERS=module,... adds handler modules of your own to every worker
(WORKER_HANDLER_MODULES; ``make dev HANDLERS=acme_jobs.handlers`` runs the example package's
types beside the built-in ones, docs/sdk.md).

Supervised (jobs_testing.supervisor): a service that exits is reported and restarted
with backoff while the rest keeps running; Ctrl-C stops the gateway, then the workers (they
drain), then the rest.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import asyncpg

from jobs_common.settings import DEV_JWT_SECRET, DEV_SECRET
from jobs_testing.infra import free_port, wait_for_port
from jobs_testing.stack import Stack, StackConfig
from jobs_testing.supervisor import supervise_stack

ROOT = Path(__file__).resolve().parents[1]
VAR = ROOT / "var"
UI_BUILD = ROOT / "frontend" / "dist"  # `make dev` builds it first
DATABASE = os.environ.get("DEV_DATABASE", "jobs")
PG_ADMIN = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


async def ensure_database() -> str:
    connection = await asyncpg.connect(PG_ADMIN)
    try:
        exists = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", DATABASE)
        if not exists:
            await connection.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        await connection.close()
    return PG_ADMIN.rsplit("/", 1)[0] + "/" + DATABASE


def start_helpers() -> tuple[str, list[subprocess.Popen[bytes]]]:
    helpers: list[subprocess.Popen[bytes]] = []
    logs = VAR / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    mongo_url = os.environ.get("MONGO_URL", "")
    if not mongo_url:
        (VAR / "mongo").mkdir(parents=True, exist_ok=True)
        executable = shutil.which("nx-27017") or str(Path(sys.executable).parent / "nx-27017")
        helpers.append(
            subprocess.Popen(
                [
                    executable,
                    "--data-dir",
                    str(VAR / "mongo"),
                    "-p",
                    "27017",
                    "--log-file",
                    str(logs / "mongo.log"),
                    "--pid-file",
                    str(VAR / "mongo.pid"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C: stopped after the services, not before
            )
        )
        wait_for_port("127.0.0.1", 27017)
        mongo_url = "mongodb://127.0.0.1:27017"
        print("MongoDB: nx-27017 stand-in on :27017 (data in var/mongo)")
    smtp_log = (logs / "smtp.log").open("ab")
    helpers.append(
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "aiosmtpd",
                "-n",
                "-l",
                "127.0.0.1:1025",
                "-c",
                "aiosmtpd.handlers.Debugging",
            ],
            stdout=smtp_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the workers may still send emails while they drain
        )
    )
    wait_for_port("127.0.0.1", 1025)
    return mongo_url, helpers


def interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    workers = int(os.environ.get("WORKERS", "2"))
    schedulers = int(os.environ.get("SCHEDULERS", "1"))
    handlers = os.environ.get("HANDLERS", "").strip()
    worker_env = {"WORKER_HANDLER_MODULES": handlers} if handlers else {}
    # The console's admin link to the RabbitMQ console (scripts/ensure-infra.sh enables it).
    os.environ.setdefault("DASHBOARD_RABBITMQ_CONSOLE_URL", "http://127.0.0.1:15672")
    database_url = asyncio.run(ensure_database())
    mongo_url, helpers = start_helpers()
    config = StackConfig(
        database_url=database_url,
        amqp_url=os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"),
        mongo_url=mongo_url,
        artifacts_dir=str(VAR / "artifacts"),
        workers=workers,
        schedulers=schedulers,
        scheduler_ports=(8080, *(free_port() for _ in range(schedulers - 1))),
        log_json=False,
        ui_dir=str(UI_BUILD),
        internal_token=DEV_SECRET,
        jwt_secret=DEV_JWT_SECRET,
        gateway_metrics_port=9300,
        worker_env=tuple(worker_env for _ in range(workers)),
    )
    stack = Stack(config, VAR / "logs")
    supervisor = supervise_stack(stack)
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    try:
        supervisor.start()
        stack.wait_ready(timeout=90, restarting=True)
        if os.environ.get("DEMO", "1") != "0":
            subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], check=False)
        built = (UI_BUILD / "index.html").is_file()
        ui_note = "" if built else "  (not built: run `make ui`)"
        scheduler_ports = ", ".join(
            f":{s.port}" for s in stack.services.values() if s.module == "jobs_scheduler"
        )
        print(
            "\nThe platform is running:\n"
            f"  web UI                http://127.0.0.1:{config.gateway_port}/{ui_note}\n"
            f"  gateway (public API)  http://127.0.0.1:{config.gateway_port}  (OpenAPI at /docs)\n"
            f"  gateway metrics       http://127.0.0.1:{config.gateway_metrics_port}/metrics\n"
            f"  submission            http://127.0.0.1:{config.submission_port}\n"
            f"  schedulers ({schedulers})        {scheduler_ports}  (/ready)\n"
            f"  dashboard API         http://127.0.0.1:{config.dashboard_port}\n"
            f"  workers ({workers})           metrics from :{config.worker_base_port}\n"
            "  RabbitMQ console      http://127.0.0.1:15672  (guest / guest)\n"
            "  logins                admin@test.com / admin123, user@test.com / user123\n"
            "  logs                  var/logs/*.log; emails in var/logs/smtp.log\n"
            "A service that exits is restarted (with backoff). Ctrl-C stops everything.",
            flush=True,
        )
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        # A second Ctrl-C must not cut the ordered stop short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("Stopping: gateway, then workers (draining), then the rest...", flush=True)
        supervisor.stop()
        for helper in helpers:
            helper.terminate()
            helper.wait(timeout=10)


if __name__ == "__main__":
    main()
