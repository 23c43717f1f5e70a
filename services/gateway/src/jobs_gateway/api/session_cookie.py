"""The console's session cookie: the refresh token in an ``HttpOnly``, ``SameSite=Strict``
cookie scoped to ``/auth`` (``Secure`` unless ``GATEWAY_SESSION_COOKIE_SECURE`` says
otherwise), so the browser keeps the session across tabs and reloads while no script on the
page can read the token.

A client opts in per request with the header ``X-Session-Cookie: 1`` on ``/auth/login``,
``/auth/refresh`` and ``/auth/logout``; without it those routes take and give the refresh
token in the JSON body, as before (the CLI, the SDK, scripts). Every request that opts in is
checked against forgery first (domain/csrf.py): 403 before anything is read or changed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from fastapi import Header, Request, Response

from jobs_common.errors import Forbidden, Unauthorized
from jobs_gateway.domain.csrf import forgery_refusal
from jobs_gateway.settings import Settings

SESSION_COOKIE = "jobs_refresh"
SESSION_COOKIE_HEADER = "X-Session-Cookie"
SESSION_COOKIE_PATH = "/auth"
NO_SESSION_COOKIE = "no session cookie"

CookieOptIn = Annotated[
    Literal["1"] | None,
    Header(
        alias=SESSION_COOKIE_HEADER,
        description="`1`: the refresh token travels in the session cookie `jobs_refresh` "
        "(HttpOnly, SameSite=Strict, Path=/auth), not in the JSON body; the web console's "
        "mode (docs/security.md, 'Sessions')",
    ),
]


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def refuse_forgery(request: Request) -> None:
    """403 unless the request may use the session cookie (domain/csrf.py)."""
    settings = _settings(request)
    own_origin = f"{request.url.scheme}://{request.url.netloc}"
    reason = forgery_refusal(
        origin=request.headers.get("origin"),
        fetch_site=request.headers.get("sec-fetch-site"),
        own_origin=own_origin,
        trusted_origins=settings.cors_origins,
    )
    if reason is not None:
        raise Forbidden(reason)


def presented(request: Request) -> str | None:
    """The refresh token of the session cookie, if the request carries one."""
    return request.cookies.get(SESSION_COOKIE) or None


def required(request: Request) -> str:
    """The refresh token of the session cookie; 401 without one."""
    token = presented(request)
    if token is None:
        raise Unauthorized(NO_SESSION_COOKIE)
    return token


def reuse_grace(request: Request) -> timedelta:
    """How long a used cookie token presented again counts as a lost answer, not a replay."""
    return timedelta(seconds=_settings(request).session_cookie_reuse_grace_seconds)


def keep(request: Request, response: Response, refresh_token: str) -> None:
    """Set the cookie to ``refresh_token`` for as long as the token lives."""
    settings = _settings(request)
    response.set_cookie(
        SESSION_COOKIE,
        refresh_token,
        max_age=settings.refresh_token_ttl_days * 86_400,
        path=SESSION_COOKIE_PATH,
        secure=settings.session_cookie_is_secure,
        httponly=True,
        samesite="strict",
    )


def drop(request: Request, response: Response) -> None:
    """Tell the browser to forget the cookie."""
    response.delete_cookie(
        SESSION_COOKIE,
        path=SESSION_COOKIE_PATH,
        secure=_settings(request).session_cookie_is_secure,
        httponly=True,
        samesite="strict",
    )
