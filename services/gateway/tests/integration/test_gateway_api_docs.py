"""The API docs at /docs: Swagger UI whose script, stylesheet and icon the gateway serves
itself (package data of a pinned dependency), so the page works without internet."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from ..conftest import GatewayFactory, Upstreams

pytestmark = pytest.mark.integration

ORIGIN = "http://gateway"  # the test client's base URL
CONTENT_TYPES = {
    "script": ("text/javascript", "application/javascript"),
    "stylesheet": ("text/css",),
    "icon": ("image/",),
}


class AssetLinks(HTMLParser):
    """Every ``<script src>`` and ``<link href>`` of a page, by kind."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "script" and values.get("src"):
            self.found.append(("script", values["src"]))
        elif tag == "link" and values.get("href"):
            rel = values.get("rel", "").lower()
            self.found.append(("stylesheet" if "stylesheet" in rel else "icon", values["href"]))


def asset_links(html: str) -> list[tuple[str, str]]:
    parser = AssetLinks()
    parser.feed(html)
    return parser.found


@pytest.fixture(params=["api only", "with the web UI"])
async def docs_gateway(
    request: pytest.FixtureRequest,
    gateway_factory: GatewayFactory,
    upstreams: Upstreams,
    tmp_path: Path,
) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway, alone and with a UI build (whose catch-all must not take /docs/...)."""
    overrides: dict[str, object] = {}
    if request.param == "with the web UI":
        (tmp_path / "index.html").write_text("<!doctype html><title>Jobs</title>")
        overrides["ui_dir"] = tmp_path
    async with gateway_factory(
        submission_url=upstreams.submission.url,
        dashboard_url=upstreams.dashboard.url,
        **overrides,
    ) as client:
        yield client


async def test_docs_loads_no_script_or_stylesheet_from_another_host(
    docs_gateway: httpx.AsyncClient,
) -> None:
    page = await docs_gateway.get("/docs")
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    links = asset_links(page.text)
    kinds = {kind for kind, _ in links}
    assert {"script", "stylesheet"} <= kinds, links
    for kind, url in links:
        absolute = urlsplit(urljoin(ORIGIN + "/docs", url))
        assert (absolute.scheme, absolute.netloc) == ("http", "gateway"), (kind, url)
    # Nor any other absolute URL (a CDN, a font host) anywhere in the page.
    assert re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}", page.text) == []
    assert "SwaggerUIBundle(" in page.text and "'/openapi.json'" in page.text


async def test_every_docs_asset_is_served_by_the_gateway(
    docs_gateway: httpx.AsyncClient,
) -> None:
    links = asset_links((await docs_gateway.get("/docs")).text)
    assert links
    for kind, url in links:
        answer = await docs_gateway.get(urljoin(ORIGIN + "/docs", url))
        assert answer.status_code == 200, (kind, url, answer.text[:200])
        assert answer.headers["content-type"].startswith(CONTENT_TYPES[kind]), (kind, url)
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert len(answer.content) > 100, (kind, url)
        if kind == "script":
            assert b"SwaggerUIBundle" in answer.content
        if kind == "stylesheet":
            assert b".swagger-ui" in answer.content


async def test_only_the_docs_assets_of_this_version_are_served(
    docs_gateway: httpx.AsyncClient,
) -> None:
    links = asset_links((await docs_gateway.get("/docs")).text)
    script = next(url for kind, url in links if kind == "script")
    folder = script.rsplit("/", 1)[0]
    for path in (
        f"{folder}/redoc.standalone.js",  # in the package, not served
        f"{folder}/%2e%2e/%2e%2e/openapi/public.json",
        f"{folder}/..%2f__init__.py",
        "/docs/assets/0.0.0/swagger-ui-bundle.js",  # another version
    ):
        answer = await docs_gateway.get(path)
        assert answer.status_code == 404, path
        assert answer.json()["error"] == "not_found", path
    head = await docs_gateway.head(script)
    assert head.status_code == 200 and head.content == b""
    redirect = await docs_gateway.get("/docs/oauth2-redirect")
    assert redirect.status_code == 200 and "oauth2" in redirect.text
    # FastAPI's /redoc page would load Redoc from a CDN: there is none.
    assert "cdn" not in (await docs_gateway.get("/redoc")).text
