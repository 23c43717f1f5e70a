"""/auth: login, refresh, logout, register, me."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response, status

from jobs_common.errors import ErrorEnvelope
from jobs_gateway.api.deps import AccountsDep, BearerIdentity, ClientIp, SessionsDep
from jobs_gateway.api.schemas import (
    LoginRequest,
    LogoutRequest,
    RefreshRequest,
    RegistrationAccepted,
    TokenResponse,
    UserCreate,
    UserPublic,
)
from jobs_gateway.app.sessions import Session

router = APIRouter(prefix="/auth", tags=["auth"])

Responses = dict[int | str, dict[str, Any]]

_401: Responses = {401: {"model": ErrorEnvelope, "description": "invalid credentials or token"}}
_429: Responses = {
    429: {
        "model": ErrorEnvelope,
        "description": "too many attempts; `Retry-After` gives the seconds to wait",
        "headers": {
            "Retry-After": {
                "description": "seconds until the limit allows another attempt",
                "schema": {"type": "integer"},
            }
        },
    }
}

REGISTRATION_ACCEPTED = (
    "Registration received. If this email was not registered yet, the account exists now: "
    "log in with your email and password."
)


def _tokens(session: Session) -> TokenResponse:
    return TokenResponse(
        token=session.tokens.access,
        expires_in=session.tokens.expires_in,
        refresh_token=session.tokens.refresh,
        user=UserPublic.of(session.user),
    )


@router.post("/login", responses={**_401, **_429})
async def login(body: LoginRequest, accounts: AccountsDep, ip: ClientIp) -> TokenResponse:
    """A new session: an access token and a refresh token. Login attempts are limited per
    account and per client address."""
    session = await accounts.login(email=body.email, password=body.password, client_ip=ip)
    return _tokens(session)


@router.post(
    "/refresh",
    responses={
        401: {
            "model": ErrorEnvelope,
            "description": "invalid, expired, revoked or already used refresh token (a reuse "
            "revokes the whole session), or the user no longer exists",
        }
    },
)
async def refresh(body: RefreshRequest, sessions: SessionsDep) -> TokenResponse:
    """The next token pair of the session. The refresh token is used up: keep the new one
    from this answer; presenting a used one again ends the session."""
    return _tokens(await sessions.refresh(body.refresh_token))


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses={401: {"model": ErrorEnvelope, "description": "not a refresh token of ours"}},
)
async def logout(body: LogoutRequest, sessions: SessionsDep) -> Response:
    """End the session of this refresh token: every refresh token of the session is revoked
    (idempotent; an expired or used token of the session works too). Access tokens already
    issued stay valid until their `exp` (at most 15 minutes)."""
    await sessions.end(body.refresh_token)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/register", status_code=status.HTTP_202_ACCEPTED, responses=_429)
async def register(body: UserCreate, accounts: AccountsDep, ip: ClientIp) -> RegistrationAccepted:
    """Register a user. The answer is the same whether the email was new or taken (it tells
    nobody which emails have accounts): log in afterwards. Limited per client address."""
    await accounts.register(email=body.email, password=body.password, client_ip=ip)
    return RegistrationAccepted(message=REGISTRATION_ACCEPTED)


@router.get("/me", responses=_401)
async def me(identity: BearerIdentity) -> UserPublic:
    return UserPublic(id=identity.user_id, email=identity.email, role=identity.role)
