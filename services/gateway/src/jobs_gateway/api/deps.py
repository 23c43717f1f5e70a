"""FastAPI dependencies as Annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from jobs_common.auth import Identity
from jobs_common.errors import BadRequest, Forbidden
from jobs_gateway.adapters.upstream import Upstreams
from jobs_gateway.app.accounts import Accounts
from jobs_gateway.app.api_keys import ApiKeys
from jobs_gateway.app.api_rate_limit import ApiRateLimit
from jobs_gateway.app.project_scope import ProjectScopes
from jobs_gateway.app.sessions import Sessions
from jobs_gateway.domain.api_keys import looks_like_key
from jobs_gateway.domain.project_scope import PROJECT_HEADER, PROJECT_QUERY
from jobs_gateway.domain.tokens import bearer_token

KEYS_NOT_HERE = (
    "an API key may not manage organizations, projects or keys: a person does (docs/tenancy.md)"
)
API_KEY_HEADER = "x-api-key"


async def _accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


async def _sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.sessions
    return sessions


async def _upstreams(request: Request) -> Upstreams:
    upstreams: Upstreams = request.app.state.upstreams
    return upstreams


def presented_key(request: Request) -> str | None:
    """The API key of ``X-API-Key`` or of ``Authorization: Bearer jk_...``, if any."""
    header = request.headers.get(API_KEY_HEADER)
    if header is not None:
        return header.strip()
    authorization = request.headers.get("authorization")
    if authorization:
        token = bearer_token(authorization)
        if looks_like_key(token):
            return token
    return None


async def _bearer_identity(request: Request) -> Identity:
    """The verified identity of an access token; 401 for anything else. An API key is
    refused here (403): these routes are a person's (docs/tenancy.md)."""
    if presented_key(request) is not None:
        raise Forbidden(KEYS_NOT_HERE)
    sessions: Sessions = request.app.state.sessions
    return sessions.tokens.verify_access(bearer_token(request.headers.get("authorization")))


def _count(request: Request, identity: Identity) -> None:
    """Count the call against its user's (or key's) request limit: 429 past it."""
    limit: ApiRateLimit = request.app.state.api_rate_limit
    limit.check(identity.user_id)


async def _rate_limited_identity(
    request: Request, identity: Annotated[Identity, Depends(_bearer_identity)]
) -> Identity:
    """The bearer identity, counted against its user's request limit (429 past it)."""
    _count(request, identity)
    return identity


def named_project(request: Request) -> str | None:
    """The project a request names: ``X-Project`` or the ``projectId`` query parameter (400
    when they disagree)."""
    header = request.headers.get(PROJECT_HEADER)
    query = request.query_params.getlist(PROJECT_QUERY)
    if len(query) > 1 or (header is not None and query and query[0] != header):
        raise BadRequest("name one project: X-Project and projectId disagree")
    return header if header is not None else (query[0] if query else None)


async def scoped_identity(request: Request) -> Identity:
    """The caller of a proxied ``/api`` route with its project scope
    (:mod:`jobs_gateway.app.project_scope`): an access token's user or an API key's project,
    counted against its request limit."""
    scopes: ProjectScopes = request.app.state.project_scopes
    named = named_project(request)
    presented = presented_key(request)
    if presented is None:
        identity = await _bearer_identity(request)
        _count(request, identity)
        return await scopes.of_user(identity, named)
    keys: ApiKeys = request.app.state.api_keys
    identity = scopes.of_key(await keys.authenticate(presented), named)
    _count(request, identity)
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
