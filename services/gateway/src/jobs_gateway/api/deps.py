"""FastAPI dependencies as Annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from jobs_common.auth import Identity
from jobs_common.errors import Forbidden
from jobs_gateway.adapters.upstream import Upstreams
from jobs_gateway.app.accounts import Accounts
from jobs_gateway.app.api_rate_limit import ApiRateLimit
from jobs_gateway.app.sessions import Sessions
from jobs_gateway.domain.api_keys import looks_like_key
from jobs_gateway.domain.tokens import bearer_token

KEYS_NOT_YET = (
    "an API key may call GET /api/api-key only, for now: the job routes act as the key's "
    "project once jobs belong to projects (docs/tenancy.md)"
)


async def _accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


async def _sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.sessions
    return sessions


async def _upstreams(request: Request) -> Upstreams:
    upstreams: Upstreams = request.app.state.upstreams
    return upstreams


async def _bearer_identity(request: Request) -> Identity:
    """The verified identity of an access token; 401 for anything else. An API key is
    refused here (403) until the routes it may call act on its project (docs/tenancy.md)."""
    if request.headers.get("x-api-key") is not None:
        raise Forbidden(KEYS_NOT_YET)
    token = bearer_token(request.headers.get("authorization"))
    if looks_like_key(token):
        raise Forbidden(KEYS_NOT_YET)
    sessions: Sessions = request.app.state.sessions
    return sessions.tokens.verify_access(token)


async def _rate_limited_identity(
    request: Request, identity: Annotated[Identity, Depends(_bearer_identity)]
) -> Identity:
    """The bearer identity, counted against its user's request limit (429 past it)."""
    limit: ApiRateLimit = request.app.state.api_rate_limit
    limit.check(identity.user_id)
    return identity


async def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def request_id(request: Request) -> str:
    value: str = request.state.request_id
    return value


AccountsDep = Annotated[Accounts, Depends(_accounts)]
SessionsDep = Annotated[Sessions, Depends(_sessions)]
UpstreamsDep = Annotated[Upstreams, Depends(_upstreams)]
BearerIdentity = Annotated[Identity, Depends(_bearer_identity)]
# For /api/*: a verified identity within its user's request limit.
LimitedIdentity = Annotated[Identity, Depends(_rate_limited_identity)]
ClientIp = Annotated[str, Depends(client_ip)]
RequestId = Annotated[str, Depends(request_id)]
