"""The web UI's build served at / beside the API: files by path, the app for client routes,
the API's own answers untouched."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from ..conftest import GatewayFactory, Upstreams

pytestmark = pytest.mark.integration

INDEX = "<!doctype html><title>Jobs</title><div id=root></div>"


@pytest.fixture
def build(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text(INDEX)
    (tmp_path / "assets" / "app-3f2a.js").write_text("console.log('app')")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    (tmp_path.parent / "secret.txt").write_text("outside the build")
    return tmp_path


@pytest.fixture
async def ui_gateway(
    gateway_factory: GatewayFactory, upstreams: Upstreams, build: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        ui_dir=build,
    ) as client:
        yield client


async def test_the_app_answers_its_own_routes_and_revalidates(
    ui_gateway: httpx.AsyncClient,
) -> None:
    for path in ("/", "/jobs", "/jobs/6f1c2a4e-0000-4000-8000-000000000000", "/dead-letters"):
        answer = await ui_gateway.get(path)
        assert answer.status_code == 200, path
        assert answer.text == INDEX
        assert answer.headers["cache-control"] == "no-cache"
        assert answer.headers["content-type"].startswith("text/html")


async def test_build_files_are_served_and_hashed_assets_cached(
    ui_gateway: httpx.AsyncClient,
) -> None:
    asset = await ui_gateway.get("/assets/app-3f2a.js")
    assert asset.text == "console.log('app')"
    assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert (await ui_gateway.get("/favicon.svg")).headers["cache-control"] == "no-cache"
    missing = await ui_gateway.get("/assets/gone-1234.js")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


async def test_nothing_outside_the_build_is_served(ui_gateway: httpx.AsyncClient) -> None:
    for raw in ("/%2e%2e/secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt"):
        answer = await ui_gateway.get(raw)
        assert "outside the build" not in answer.text, raw


async def test_the_api_keeps_its_answers(
    ui_gateway: httpx.AsyncClient, admin_token: str, upstreams: Upstreams
) -> None:
    unknown = await ui_gateway.get("/auth/nothing-here")
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    assert (await ui_gateway.get("/api/jobs")).status_code == 401  # the proxy, not the app
    proxied = await ui_gateway.get("/api/jobs", headers={"Authorization": f"Bearer {admin_token}"})
    assert proxied.status_code == 200 and proxied.text != INDEX
    assert (await ui_gateway.get("/openapi.json")).json()["info"]["title"] == "Jobs platform API"
    assert (await ui_gateway.get("/health")).status_code == 200


async def test_without_a_build_the_root_is_the_api_404(
    gateway_factory: GatewayFactory, upstreams: Upstreams, tmp_path: Path
) -> None:
    async with gateway_factory(ui_dir=tmp_path / "not-built") as client:
        answer = await client.get("/jobs")
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"
