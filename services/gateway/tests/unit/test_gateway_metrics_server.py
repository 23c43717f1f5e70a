"""The gateway's metrics port: a metrics-only app, off when 0, never the public port."""

from __future__ import annotations

import httpx
import pytest
from pydantic import ValidationError

from jobs_gateway.adapters.metrics_server import metrics_app, metrics_sidecars
from jobs_gateway.settings import Settings

pytestmark = pytest.mark.unit


async def test_the_metrics_app_serves_metrics_only() -> None:
    transport = httpx.ASGITransport(app=metrics_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://metrics") as client:
        scraped = await client.get("/metrics")
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain")
        assert "# TYPE" in scraped.text
        for path in ("/", "/health", "/api/jobs", "/metrics/x"):
            assert (await client.get(path)).status_code == 404, path


def test_a_sidecar_on_the_metrics_port_unless_zero() -> None:
    (sidecar,) = metrics_sidecars(Settings(metrics_port=9311))
    assert sidecar.port == 9311
    assert metrics_sidecars(Settings(metrics_port=0)) == []
    assert Settings().metrics_port == 9300


def test_the_metrics_port_is_not_the_public_port() -> None:
    with pytest.raises(ValidationError, match="GATEWAY_METRICS_PORT must differ"):
        Settings(port=3000, metrics_port=3000)
