"""One rule on every route with a body: a body that is not JSON answers 400 bad_request, a JSON
body that fails validation 422 with its fields (docs/gateway.md, "Errors")."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel

from jobs_common.error_handlers import UNPARSABLE_BODY, install_error_handlers

pytestmark = pytest.mark.unit


class Login(BaseModel):
    email: str
    password: str


def app() -> FastAPI:
    application = FastAPI()
    install_error_handlers(application)

    @application.post("/login")
    async def login(body: Login) -> dict[str, str]:
        return {"email": body.email}

    return application


async def post(content: bytes) -> httpx.Response:
    transport = httpx.ASGITransport(app=app())
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.post(
            "/login", content=content, headers={"Content-Type": "application/json"}
        )


@pytest.mark.parametrize("content", [b"{not json", b'{"email": "a@b.c",', b"\xff\xfe"])
async def test_a_body_that_is_not_json_is_a_400(content: bytes) -> None:
    response = await post(content)
    assert response.status_code == 400
    assert response.json() == {"error": "bad_request", "message": UNPARSABLE_BODY, "details": []}


async def test_a_json_body_that_fails_validation_is_still_a_422_with_its_field() -> None:
    response = await post(b'{"email": "a@b.c"}')
    assert response.status_code == 422
    assert response.json()["details"] == [{"field": "password", "message": "Field required"}]
