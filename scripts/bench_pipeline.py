"""Benchmark the whole pipeline on this machine: ``make bench`` (N=2000 WORKERS=2 by default).

Starts every service as a real process on a fresh PostgreSQL database, RabbitMQ vhost and
Mongo database (as the e2e tests do), submits N no-op ``simulate`` jobs through the gateway,
single requests with C in flight and then one batch, and prints figures: submission rate,
time until every job is terminal, end-to-end throughput and latency percentiles (accepted
-> finished, from PostgreSQL). Figures only; nothing here asserts on speed.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx

from jobs_common.testing.infra import free_port, resolve_mongo, resolve_postgres, resolve_rabbitmq
from jobs_common.testing.plugin import PostgresServer, RabbitServer
from jobs_common.testing.stack import Stack, StackConfig

NOOP = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}


def plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def wait_terminal(database_url: str, job_ids: list[str]) -> list[float]:
    """Wait until every job is terminal; each job's accepted -> finished latency in seconds."""
    connection = await asyncpg.connect(plain(database_url))
    try:
        while True:
            done = await connection.fetchval(
                "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) "
                "AND status IN ('succeeded', 'dead', 'cancelled')",
                job_ids,
            )
            if done == len(job_ids):
                break
            await asyncio.sleep(0.05)
        rows = await connection.fetch(
            "SELECT extract(epoch FROM finished_at - created_at) AS s FROM jobs "
            "WHERE id = ANY($1::uuid[])",
            job_ids,
        )
    finally:
        await connection.close()
    return [float(r["s"]) for r in rows]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(n: int, concurrency: int, workers: int) -> None:
    postgres = resolve_postgres()
    rabbit, management = resolve_rabbitmq()
    mongo = resolve_mongo()
    print(f"PostgreSQL: {postgres.source}; RabbitMQ: {rabbit.source}; MongoDB: {mongo.source}")
    database = f"bench_{uuid.uuid4().hex[:8]}"
    pg_server = PostgresServer(postgres.url)
    database_url = await pg_server.create(database)
    rabbit_server = RabbitServer(rabbit.url, management)
    vhost = await rabbit_server.create_vhost()
    base = Path(tempfile.mkdtemp(prefix="bench-"))
    config = StackConfig(
        database_url=database_url,
        amqp_url=rabbit_server.url_for(vhost),
        mongo_url=mongo.url,
        mongo_db=f"bench_{uuid.uuid4().hex[:8]}",
        artifacts_dir=str(base / "artifacts"),
        gateway_port=free_port(),
        submission_port=free_port(),
        scheduler_port=free_port(),
        dashboard_port=free_port(),
        worker_ports=tuple(free_port() for _ in range(workers)),
        workers=workers,
        environment="test",
        extra_env={
            "SCHEDULER_LOG_LEVEL": "WARNING",
            "WORKER_LOG_LEVEL": "WARNING",
            "SUBMISSION_LOG_LEVEL": "WARNING",
            "GATEWAY_LOG_LEVEL": "WARNING",
            "DASHBOARD_LOG_LEVEL": "WARNING",
        },
    )
    stack = Stack(config, base / "logs")
    stack.start()
    try:
        await asyncio.to_thread(stack.wait_ready, 90.0)
        gateway = stack.services["gateway"].url
        async with httpx.AsyncClient(base_url=gateway, timeout=60) as client:
            login = await client.post(
                "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
            )
            client.headers["Authorization"] = f"Bearer {login.json()['token']}"
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> str:
                async with gate:
                    r = await client.post(
                        "/api/jobs",
                        json={"type": "simulate", "priority": 1 + i % 3, "payload": NOOP},
                    )
                    r.raise_for_status()
                    return str(r.json()["jobId"])

            t0 = time.perf_counter()
            ids = await asyncio.gather(*(one(i) for i in range(n)))
            submit_s = time.perf_counter() - t0
            latencies = await wait_terminal(database_url, ids)
            total_s = time.perf_counter() - t0
            print(f"\nsingle submissions: {n} jobs, {concurrency} in flight, {workers} workers")
            print(f"  accepted at        {n / submit_s:8.0f} jobs/s ({submit_s:.2f} s)")
            print(f"  all terminal after {total_s:8.2f} s  -> {n / total_s:.0f} jobs/s end to end")
            print(
                f"  latency accepted->finished  p50 {percentile(latencies, 0.5):.3f} s  "
                f"p95 {percentile(latencies, 0.95):.3f} s  max {max(latencies):.3f} s  "
                f"mean {statistics.mean(latencies):.3f} s"
            )

            t0 = time.perf_counter()
            r = await client.post(
                "/api/batches",
                json={
                    "jobs": [{"type": "simulate", "priority": 2, "payload": NOOP} for _ in range(n)]
                },
            )
            r.raise_for_status()
            batch_ids = [str(j) for j in r.json()["jobIds"]]
            accepted_s = time.perf_counter() - t0
            latencies = await wait_terminal(database_url, batch_ids)
            total_s = time.perf_counter() - t0
            print(f"\none batch: {n} jobs")
            print(f"  accepted in        {accepted_s:8.2f} s")
            print(f"  all terminal after {total_s:8.2f} s  -> {n / total_s:.0f} jobs/s end to end")
            print(
                f"  latency accepted->finished  p50 {percentile(latencies, 0.5):.3f} s  "
                f"p95 {percentile(latencies, 0.95):.3f} s  max {max(latencies):.3f} s"
            )
    finally:
        await asyncio.to_thread(stack.stop)
        await rabbit_server.delete_vhost(vhost)
        await pg_server.drop(database)
        mongo.close()
        postgres.close()
        rabbit.close()


def main() -> None:
    n = int(os.environ.get("N", "2000"))
    concurrency = int(os.environ.get("C", "64"))
    workers = int(os.environ.get("WORKERS", "2"))
    asyncio.run(run(n, concurrency, workers))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
