"""The long-lived HTTP client to the backends.

httpcore's connection pool scans every pooled connection (with a socket poll each) whenever it
assigns a request, so one pool of 100 connections under load spends most of the gateway's CPU
there. The client is therefore sharded: several small pools, picked round-robin.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from jobs_common.errors import UpstreamUnavailable
from jobs_gateway.domain.headers import client_response_headers
from jobs_gateway.domain.routing import UPSTREAMS, Upstream
from jobs_gateway.metrics import UPSTREAM_CALLS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpstreamResponse:
    status_code: int
    content: bytes
    headers: dict[str, str]


# httpcore checks every idle connection of a pool (a poll syscall each) whenever it assigns a
# request or takes a connection back: the cost of a request grows with the pool's size, so
# the connections are split into many small pools.
CONNECTIONS_PER_SHARD = 4


class ShardedClient:
    """Round-robin over several ``httpx.AsyncClient`` with small connection pools."""

    def __init__(self, clients: list[httpx.AsyncClient]) -> None:
        self._clients = clients
        self._next = itertools.cycle(clients)

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return await next(self._next).request(method, url, **kwargs)

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await next(self._next).get(url, **kwargs)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()


IDLE_CONNECTION_SECONDS = 30.0


def build_client(*, timeout: float, connect_timeout: float, max_connections: int) -> ShardedClient:
    shards = max(1, math.ceil(max_connections / CONNECTIONS_PER_SHARD))
    per_shard = max(1, math.ceil(max_connections / shards))
    return ShardedClient(
        [
            httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=connect_timeout),
                limits=httpx.Limits(
                    max_connections=per_shard,
                    max_keepalive_connections=per_shard,
                    # Well below the services' keep-alive (jobs_common.serve), so the client
                    # drops an idle connection before the server closes it under a request.
                    keepalive_expiry=IDLE_CONNECTION_SECONDS,
                ),
                follow_redirects=False,
                trust_env=False,
            )
            for _ in range(shards)
        ]
    )


class Upstreams:
    def __init__(
        self, client: ShardedClient | httpx.AsyncClient, bases: Mapping[Upstream, str]
    ) -> None:
        missing = set(UPSTREAMS) - set(bases)
        if missing:
            raise ValueError(f"no base URL for {sorted(missing)}")
        self._client = client
        self._bases = {name: url.rstrip("/") for name, url in bases.items()}

    async def forward(
        self,
        *,
        upstream: Upstream,
        method: str,
        path: str,
        query: str,
        headers: Mapping[str, str],
        body: bytes,
        request_id: str,
    ) -> UpstreamResponse:
        url = self._bases[upstream] + path + (f"?{query}" if query else "")
        try:
            response = await self._client.request(
                method, url, headers=dict(headers), content=body or None
            )
        except httpx.TimeoutException as exc:
            self._failed(upstream, "timeout", request_id, exc)
            raise UpstreamUnavailable(f"{upstream} did not answer in time") from exc
        except httpx.TransportError as exc:
            self._failed(upstream, "unavailable", request_id, exc)
            raise UpstreamUnavailable(f"{upstream} is unavailable") from exc
        outcome = "error_status" if response.status_code >= 500 else "ok"
        UPSTREAM_CALLS.labels(upstream, outcome).inc()
        return UpstreamResponse(
            status_code=response.status_code,
            content=response.content,
            headers=client_response_headers(response.headers),
        )

    async def healthy(self, upstream: Upstream, *, within: float) -> bool:
        try:
            response = await self._client.get(self._bases[upstream] + "/health", timeout=within)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    @staticmethod
    def _failed(upstream: str, outcome: str, request_id: str, exc: Exception) -> None:
        UPSTREAM_CALLS.labels(upstream, outcome).inc()
        log.warning(
            "upstream call failed",
            extra={
                "action": "proxy_failed",
                "upstream": upstream,
                "outcome": outcome,
                "request_id": request_id,
                "error": repr(exc),
            },
        )
