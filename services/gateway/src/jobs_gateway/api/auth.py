"""/auth: login, refresh, logout, register, me, and the demo logins of development."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response, status

from jobs_common.api_models import CamelModel
from jobs_common.errors import ErrorEnvelope, NotFound
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
from jobs_gateway.domain.demo import DEMO_TEAM
from jobs_gateway.domain.users import DEMO_USERS
from jobs_gateway.settings import Settings

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


class DemoAccountOut(CamelModel):
    email: str
    password: str
    description: str


class DemoAccounts(CamelModel):
    accounts: list[DemoAccountOut]


@router.get(
    "/demo-accounts",
    responses={404: {"model": ErrorEnvelope, "description": "not a development gateway"}},
)
async def demo_accounts(request: Request) -> DemoAccounts:
    """The demo logins, for the login page to list: in development only (their passwords are
    published; elsewhere they do not exist, and this answers 404)."""
    settings: Settings = request.app.state.settings
    if not settings.seeds_demo_users:
        raise NotFound("no demo accounts outside development")
    platform = [
        DemoAccountOut(
            email=email,
            password=password,
            description="platform admin: sees everything" if role == "admin" else "a user",
        )
        for email, password, role in DEMO_USERS
    ]
    team = [
        DemoAccountOut(email=a.email, password=a.password, description=a.description)
        for a in DEMO_TEAM
    ]
    return DemoAccounts(accounts=platform + team)
