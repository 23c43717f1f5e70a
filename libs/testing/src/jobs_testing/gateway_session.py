"""Signing in to a gateway under test (the e2e stack, the compose stack): a bearer token, or a
client that sends it with every request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx


async def login(gateway_url: str, email: str, password: str) -> str:
    """An access token for ``email``; fails the test when the gateway refuses."""
    async with httpx.AsyncClient(base_url=gateway_url, timeout=30) as client:
        response = await client.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


@asynccontextmanager
async def signed_in(
    gateway_url: str, email: str, password: str
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the gateway carrying ``email``'s access token."""
    token = await login(gateway_url, email, password)
    async with httpx.AsyncClient(
        base_url=gateway_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        yield client
