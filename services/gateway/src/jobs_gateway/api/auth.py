"""/auth: login, refresh, register, me."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from jobs_common.errors import ErrorEnvelope
from jobs_gateway.accounts import Session
from jobs_gateway.api.deps import AccountsDep, BearerIdentity, ClientIp
from jobs_gateway.api.schemas import (
    LoginRequest,
    RefreshRequest,
    TokenResponse,
    UserCreate,
    UserPublic,
)

router = APIRouter(prefix="/auth", tags=["auth"])

_401: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorEnvelope, "description": "invalid credentials or token"}
}


def _tokens(session: Session) -> TokenResponse:
    return TokenResponse(
        token=session.tokens.access,
        expires_in=session.tokens.expires_in,
        refresh_token=session.tokens.refresh,
        user=UserPublic.of(session.user),
    )


@router.post(
    "/login",
    responses={**_401, 429: {"model": ErrorEnvelope, "description": "too many attempts"}},
)
async def login(body: LoginRequest, accounts: AccountsDep, ip: ClientIp) -> TokenResponse:
    session = await accounts.login(email=body.email, password=body.password, client_ip=ip)
    return _tokens(session)


@router.post("/refresh", responses=_401)
async def refresh(body: RefreshRequest, accounts: AccountsDep) -> TokenResponse:
    return _tokens(await accounts.refresh(refresh_token=body.refresh_token))


@router.post(
    "/register",
    status_code=status.HTTP_201_CREATED,
    responses={409: {"model": ErrorEnvelope, "description": "email already registered"}},
)
async def register(body: UserCreate, accounts: AccountsDep) -> UserPublic:
    return UserPublic.of(await accounts.register(email=body.email, password=body.password))


@router.get("/me", responses=_401)
async def me(identity: BearerIdentity) -> UserPublic:
    return UserPublic(id=identity.user_id, email=identity.email, role=identity.role)
