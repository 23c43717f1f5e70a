"""/auth: login, refresh, logout, register, me, and the demo logins of development.

Login, refresh and logout keep the refresh token in the JSON body, or, for a request that sends
``X-Session-Cookie: 1`` (the web console), in the session cookie (api/session_cookie.py)."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response, status

from jobs_common.api_models import CamelModel
from jobs_common.errors import ErrorDetail, ErrorEnvelope, NotFound, Unauthorized, ValidationFailed
from jobs_gateway.api import session_cookie
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


_403: Responses = {
    403: {
        "model": ErrorEnvelope,
        "description": "`X-Session-Cookie: 1` from another origin or site (cross-site request "
        "forgery)",
    }
}
REFRESH_TOKEN_REQUIRED = "Field required"
NOT_WITH_COOKIE = "not with X-Session-Cookie: the session cookie holds the token"


def _tokens(session: Session, *, in_cookie: bool = False) -> TokenResponse:
    return TokenResponse(
        token=session.tokens.access,
        expires_in=session.tokens.expires_in,
        refresh_token=None if in_cookie else session.tokens.refresh,
        user=UserPublic.of(session.user),
    )


def _body_token(given: str | None, *, cookie: bool) -> str | None:
    """The refresh token of the JSON body: required without the cookie, refused with it."""
    if cookie and given is not None:
        raise ValidationFailed(
            "request validation failed",
            details=[ErrorDetail(field="refreshToken", message=NOT_WITH_COOKIE)],
        )
    if not cookie and given is None:
        raise ValidationFailed(
            "request validation failed",
            details=[ErrorDetail(field="refreshToken", message=REFRESH_TOKEN_REQUIRED)],
        )
    return given


@router.post("/login", responses={**_401, **_403, **_429})
async def login(
    body: LoginRequest,
    accounts: AccountsDep,
    sessions: SessionsDep,
    ip: ClientIp,
    request: Request,
    response: Response,
    cookie: session_cookie.CookieOptIn = None,
) -> TokenResponse:
    """A new session: an access token and a refresh token. Login attempts are limited per
    account and per client address. With `X-Session-Cookie: 1` the refresh token is set as the
    session cookie instead of answered (and the session a previous cookie held is ended)."""
    if cookie:
        session_cookie.refuse_forgery(request)
    session = await accounts.login(email=body.email, password=body.password, client_ip=ip)
    if not cookie:
        return _tokens(session)
    previous = session_cookie.presented(request)
    if previous is not None:
        with contextlib.suppress(Unauthorized):  # not ours: nothing to end
            await sessions.end(previous)
    session_cookie.keep(request, response, session.tokens.refresh)
    return _tokens(session, in_cookie=True)


@router.post(
    "/refresh",
    responses={
        401: {
            "model": ErrorEnvelope,
            "description": "invalid, expired, revoked or already used refresh token (a reuse "
            "revokes the whole session), the user no longer exists, or no session cookie",
        },
        **_403,
    },
)
async def refresh(
    sessions: SessionsDep,
    request: Request,
    response: Response,
    body: Annotated[RefreshRequest | None, Body()] = None,
    cookie: session_cookie.CookieOptIn = None,
) -> TokenResponse:
    """The next token pair of the session. The refresh token is used up: keep the new one
    from this answer; presenting a used one again ends the session. With
    `X-Session-Cookie: 1` the token is the session cookie's and the next one replaces it in
    the cookie (send no `refreshToken`)."""
    if cookie:
        session_cookie.refuse_forgery(request)
    given = _body_token(body.refresh_token if body else None, cookie=bool(cookie))
    if given is not None:
        return _tokens(await sessions.refresh(given))
    token = session_cookie.required(request)
    session = await sessions.refresh(token, grace=session_cookie.reuse_grace(request))
    session_cookie.keep(request, response, session.tokens.refresh)
    return _tokens(session, in_cookie=True)


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses={
        401: {"model": ErrorEnvelope, "description": "not a refresh token of ours"},
        **_403,
    },
)
async def logout(
    sessions: SessionsDep,
    request: Request,
    body: Annotated[LogoutRequest | None, Body()] = None,
    cookie: session_cookie.CookieOptIn = None,
) -> Response:
    """End the session of this refresh token: every refresh token of the session is revoked
    (idempotent; an expired or used token of the session works too). Access tokens already
    issued stay valid until their `exp` (at most 15 minutes). With `X-Session-Cookie: 1` the
    session cookie's session is ended and the cookie cleared (204 also without a cookie, or
    with one this gateway did not sign: there is nothing to end then)."""
    if cookie:
        session_cookie.refuse_forgery(request)
    given = _body_token(body.refresh_token if body else None, cookie=bool(cookie))
    answer = Response(status_code=status.HTTP_204_NO_CONTENT)
    if given is not None:
        await sessions.end(given)
        return answer
    held = session_cookie.presented(request)
    if held is not None:
        with contextlib.suppress(Unauthorized):
            await sessions.end(held)
    session_cookie.drop(request, answer)
    return answer


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
