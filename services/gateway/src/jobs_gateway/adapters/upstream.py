"""Forwarding to the backends over the gateway's long-lived client (:mod:`.http1`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from jobs_common.errors import UpstreamUnavailable
from jobs_gateway.adapters.http1 import Http1Client, UpstreamError, UpstreamTimeout
from jobs_gateway.adapters.metrics import UPSTREAM_CALLS
from jobs_gateway.domain.headers import client_response_headers
from jobs_gateway.domain.routing import UPSTREAMS, Upstream

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpstreamResponse:
    status_code: int
    content: bytes
    headers: dict[str, str]


# Well below the services' keep-alive (jobs_common.serve), so the client drops an idle
# connection before the server closes it under a request.
IDLE_CONNECTION_SECONDS = 30.0


def build_client(*, timeout: float, connect_timeout: float, max_connections: int) -> Http1Client:
    return Http1Client(
        timeout=timeout,
        connect_timeout=connect_timeout,
        max_connections=max_connections,
        idle_seconds=IDLE_CONNECTION_SECONDS,
    )


class Upstreams:
    def __init__(self, client: Http1Client, bases: Mapping[Upstream, str]) -> None:
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
            response = await self._client.request(method, url, headers=headers, content=body)
        except UpstreamTimeout as exc:
            self._failed(upstream, "timeout", request_id, exc)
            raise UpstreamUnavailable(f"{upstream} did not answer in time") from exc
        except UpstreamError as exc:
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
            response = await self._client.request(
                "GET", self._bases[upstream] + "/health", timeout=within
            )
        except UpstreamError:
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
