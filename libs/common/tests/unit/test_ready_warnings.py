"""``/ready`` carries warnings (an operator should mend them) without turning unready."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from jobs_common.ops_routes import add_ops_routes

pytestmark = pytest.mark.unit


async def answered(warnings: list[str], database: bool = True) -> httpx.Response:
    async def ready() -> dict[str, bool]:
        return {"database": database}

    app = FastAPI()
    add_ops_routes(app, ready, warnings=lambda: warnings, metrics=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get("/ready")


async def test_a_warning_leaves_the_service_ready() -> None:
    response = await answered(["autovacuum_off"])
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "checks": {"database": True},
        "warnings": ["autovacuum_off"],
    }


async def test_no_warning_no_field_and_a_failing_check_is_still_unready() -> None:
    assert (await answered([])).json() == {"status": "ready", "checks": {"database": True}}
    failing = await answered(["autovacuum_off"], database=False)
    assert failing.status_code == 503
    assert failing.json()["warnings"] == ["autovacuum_off"]
