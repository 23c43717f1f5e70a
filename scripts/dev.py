"""``make dev``: the whole platform as local processes, with demo users and demo data.

Uses the local PostgreSQL and RabbitMQ (scripts/ensure-infra.sh starts them), MongoDB from
MONGO_URL or else the nx-27017 stand-in (data kept in var/mongo), and a local SMTP sink on
:1025 that logs every email the workers send (var/logs/smtp.log). WORKERS=N sets the worker
count (default 2); DEMO=0 skips the demo data.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg

from jobs_common.testing.infra import wait_for_port
from jobs_common.testing.stack import Stack, StackConfig

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
        )
    )
    wait_for_port("127.0.0.1", 1025)
    return mongo_url, helpers


def main() -> None:
    workers = int(os.environ.get("WORKERS", "2"))
    database_url = asyncio.run(ensure_database())
    mongo_url, helpers = start_helpers()
    config = StackConfig(
        database_url=database_url,
        amqp_url=os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"),
        mongo_url=mongo_url,
        artifacts_dir=str(VAR / "artifacts"),
        workers=workers,
        log_json=False,
        ui_dir=str(UI_BUILD),
    )
    stack = Stack(config, VAR / "logs")
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        stack.start()
        stack.wait_ready(timeout=90)
        if os.environ.get("DEMO", "1") != "0":
            subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py")], check=False)
        built = (UI_BUILD / "index.html").is_file()
        ui_note = "" if built else "  (not built: run `make ui`)"
        print(
            "\nThe platform is running:\n"
            f"  web UI                http://127.0.0.1:{config.gateway_port}/{ui_note}\n"
            f"  gateway (public API)  http://127.0.0.1:{config.gateway_port}  (OpenAPI at /docs)\n"
            f"  submission            http://127.0.0.1:{config.submission_port}\n"
            f"  scheduler             http://127.0.0.1:{config.scheduler_port}/ready\n"
            f"  dashboard API         http://127.0.0.1:{config.dashboard_port}\n"
            f"  workers ({workers})           metrics from :{config.worker_base_port}\n"
            "  RabbitMQ console      http://127.0.0.1:15672  (guest / guest)\n"
            "  logins                admin@test.com / admin123, user@test.com / user123\n"
            "  logs                  var/logs/*.log; emails in var/logs/smtp.log\n"
            "Ctrl-C stops everything."
        )
        while not stopping:
            for service in stack.services.values():
                if service.process is not None and service.process.poll() is not None:
                    print(f"{service.name} exited; last lines:\n{stack.tail(service.name)}")
                    stopping = True
            time.sleep(0.5)
    finally:
        stack.stop()
        for helper in helpers:
            helper.terminate()
            helper.wait(timeout=10)


if __name__ == "__main__":
    main()
