import httpx
import pytest

from jobs_common.serve import KEEP_ALIVE_SECONDS
from jobs_gateway.adapters.upstream import (
    CONNECTIONS_PER_SHARD,
    IDLE_CONNECTION_SECONDS,
    ShardedClient,
    build_client,
)

pytestmark = pytest.mark.unit


async def test_connections_are_split_into_small_pools() -> None:
    client = build_client(timeout=5, connect_timeout=1, max_connections=100)
    try:
        pools = [shard._transport._pool for shard in client._clients]  # type: ignore[attr-defined]
        assert len(pools) == 25
        assert all(pool._max_connections <= CONNECTIONS_PER_SHARD for pool in pools)
        assert sum(pool._max_connections for pool in pools) >= 100
    finally:
        await client.aclose()


async def test_requests_go_round_robin_over_the_shards() -> None:
    seen: list[int] = []

    def shard(index: int) -> httpx.AsyncClient:
        def answer(request: httpx.Request) -> httpx.Response:
            seen.append(index)
            return httpx.Response(200)

        return httpx.AsyncClient(transport=httpx.MockTransport(answer))

    client = ShardedClient([shard(0), shard(1), shard(2)])
    try:
        for _ in range(6):
            await client.request("GET", "http://upstream/health")
    finally:
        await client.aclose()
    assert seen == [0, 1, 2, 0, 1, 2]


async def test_idle_connections_are_dropped_before_the_services_close_them() -> None:
    """With equal idle timeouts a request can go out on a connection the service is closing."""
    client = build_client(timeout=5, connect_timeout=1, max_connections=16)
    try:
        pool = client._clients[0]._transport._pool  # type: ignore[attr-defined]
        assert pool._keepalive_expiry == IDLE_CONNECTION_SECONDS
        assert IDLE_CONNECTION_SECONDS < KEEP_ALIVE_SECONDS
    finally:
        await client.aclose()
