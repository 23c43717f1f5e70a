"""The private infrastructure the chaos suite breaks: each part stops and starts on its own
ports, and a client of it reconnects afterwards (the shared servers are never touched)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from pathlib import Path

import aio_pika
import asyncpg
import pytest

from jobs_common.mongo import create_client
from jobs_testing.infra import server_port
from jobs_testing.private_infra import PrivateMongo, PrivatePostgres, PrivateRabbit
from jobs_testing.waiting import eventually

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


async def test_a_private_rabbitmq_node_restarts_and_a_robust_client_reconnects() -> None:
    with PrivateRabbit() as rabbit:
        assert rabbit.amqp_port != 5672 and rabbit.node.startswith("chaos-")
        connection = await aio_pika.connect_robust(rabbit.amqp_url)
        try:
            channel = await connection.channel()
            queue = await channel.declare_queue(f"chaos-{uuid.uuid4().hex[:8]}", durable=True)

            async def published() -> bool:
                with contextlib.suppress(Exception):
                    await channel.default_exchange.publish(
                        aio_pika.Message(b"x", delivery_mode=aio_pika.DeliveryMode.PERSISTENT),
                        routing_key=queue.name,
                    )
                    return True
                return False

            assert await published()
            await asyncio.to_thread(rabbit.stop_app)
            with pytest.raises(OSError):  # the broker is down: its port refuses
                socket.create_connection(("127.0.0.1", rabbit.amqp_port), timeout=1).close()
            assert not await published()
            await asyncio.to_thread(rabbit.start_app)
            await eventually(published, timeout=60, interval=0.5, what="publish after restart")

            async def kept() -> bool:  # durable queue, persistent message: kept
                depth = {str(q["name"]): q.get("messages") for q in rabbit.queues()}
                return int(str(depth.get(queue.name) or 0)) >= 1

            await eventually(kept, timeout=30, interval=0.5, what="the queue's depth")

            async def closed_one() -> bool:  # listed a moment after its reconnect
                return await asyncio.to_thread(rabbit.close_all_connections) >= 1

            await eventually(closed_one, timeout=30, interval=0.5, what="a connection closed")
            await eventually(published, timeout=60, interval=0.5, what="publish after close")
        finally:
            await connection.close()
        directory = rabbit.directory
    assert directory is not None and not directory.exists()


async def test_a_private_postgres_cluster_stops_and_starts_and_a_pool_reconnects() -> None:
    with PrivatePostgres() as postgres:
        assert postgres.port != 5432
        pool = await asyncpg.create_pool(postgres.url, min_size=1, max_size=2)
        try:
            await pool.execute("CREATE TABLE kept (n int)")
            await pool.execute("INSERT INTO kept VALUES (1)")
            await asyncio.to_thread(postgres.stop)
            with pytest.raises((OSError, asyncpg.PostgresError, asyncpg.InterfaceError)):
                await pool.fetchval("SELECT 1")
            await asyncio.to_thread(postgres.start)

            async def kept() -> int | None:
                with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                    value: int = await pool.fetchval("SELECT sum(n) FROM kept")
                    return value
                return None

            assert await eventually(kept, timeout=30, interval=0.2, what="query after restart")
        finally:
            await pool.close()
        directory = postgres.directory
    assert directory is not None and not directory.exists()


async def test_the_private_mongo_stand_in_is_killed_and_restarted_with_its_data() -> None:
    with PrivateMongo() as mongo:
        client = create_client(mongo.url)
        try:
            await client.chaos.things.insert_one({"_id": "a", "n": 1})
            await asyncio.to_thread(mongo.kill)
            await asyncio.to_thread(mongo.start)

            async def found() -> dict[str, object] | None:
                with contextlib.suppress(Exception):
                    return await client.chaos.things.find_one({"_id": "a"})
                return None

            document = await eventually(found, timeout=30, interval=0.2, what="read after kill")
            assert document["n"] == 1
        finally:
            await client.close()
        directory = mongo.directory
    assert directory is not None and not directory.exists()


async def test_a_private_postgresql_whose_port_was_taken_first_takes_another() -> None:
    postgres = PrivatePostgres()
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", postgres.port))
    squatter.listen()
    taken = postgres.port
    try:
        postgres.start()
        assert postgres.port != taken
        connection = await asyncpg.connect(postgres.url)
        assert await connection.fetchval("SELECT 1") == 1
        await connection.close()
    finally:
        squatter.close()
        postgres.close()


def test_a_server_port_is_below_the_ephemeral_range_and_free() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(20):
        port = server_port()
        assert 20000 <= port < low
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
