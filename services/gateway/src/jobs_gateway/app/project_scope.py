"""The project scope of each ``/api`` request (docs/tenancy.md): the gateway works it out
once and forwards it beside the identity, so no backend looks up a membership.

- A user's request acts in the project it names (``X-Project`` or ``projectId``), else in
  their personal default project; it reads the named project, else every project of their
  organizations (their grants). Another organization's project is not found (404).
- An API key acts in its project with its role, and reads that project only.
- The platform admin acts where it names (any project, as its owner) and reads everything.

A user's grants are read once per ``ttl`` seconds per gateway process: a membership change
reaches every replica within that time. API keys are checked on every request (revocation is
immediate): ``ApiKeys.authenticate``.
"""

from __future__ import annotations

import asyncio
import time
import uuid

from jobs_common.auth import Identity
from jobs_common.errors import BadRequest, NotFound
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.domain.api_keys import ApiKey
from jobs_gateway.domain.project_scope import (
    MAX_GRANTS,
    NOT_FOUND,
    Grant,
    Selector,
    parse_selector,
    pick,
)

_CACHE_LIMIT = 10_000


class ProjectScopes:
    def __init__(self, store: TenancyStore, *, ttl: float = 2.0) -> None:
        self.store = store
        self.ttl = ttl
        self._grants: dict[uuid.UUID, tuple[float, list[Grant]]] = {}
        # One read per user at a time: the requests that find the cache stale together wait
        # for it instead of each reading the same rows.
        self._reading: dict[uuid.UUID, asyncio.Task[list[Grant]]] = {}

    async def of_user(self, identity: Identity, named: str | None) -> Identity:
        """``identity`` (a verified access token's) with its project scope."""
        selector = parse_selector(named) if named is not None else None
        if identity.is_admin:
            return await self._of_admin(identity, selector)
        grants = await self._grants_of(uuid.UUID(identity.user_id))
        if selector is not None:
            grant = pick(selector, grants)
            return _scoped(identity, grant, [grant])
        if len(grants) > MAX_GRANTS:
            raise BadRequest(
                f"you see more than {MAX_GRANTS} projects: name the one you mean "
                "(X-Project or projectId)"
            )
        own = personal_project_id(identity.email)
        default = next((g for g in grants if g.project_id == own), None)
        return _scoped(identity, default, grants)

    def of_key(self, key: ApiKey, named: str | None) -> Identity:
        """The identity an API key acts with: its creator's email (who answers for it), its
        own rate-limit bucket, its project and role, nothing else."""
        if named is not None:
            selector = parse_selector(named)
            if not _names_project(selector, key.project_id):
                raise NotFound(NOT_FOUND)
        role = OrgRole(key.role)
        project = str(key.project_id)
        return Identity(
            user_id=f"key:{key.id}",
            email=key.created_by,
            role="user",
            project_id=project,
            project_role=role,
            grants=((project, role),),
            api_key=key.prefix,
        )

    async def _of_admin(self, identity: Identity, selector: Selector | None) -> Identity:
        if selector is None:
            project = str(personal_project_id(identity.email))
            return identity.model_copy(
                update={"project_id": project, "project_role": OrgRole.OWNER}
            )
        grant = await self.store.grant_of_any(selector)
        if grant is None:
            raise NotFound(NOT_FOUND)
        return _scoped(identity, grant, [grant])

    async def _grants_of(self, user_id: uuid.UUID) -> list[Grant]:
        cached = self._grants.get(user_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        reading = self._reading.get(user_id)
        if reading is None:
            reading = asyncio.create_task(self._read(user_id))
            self._reading[user_id] = reading
            reading.add_done_callback(lambda done: self._read_done(user_id, done))
        return await asyncio.shield(reading)

    async def _read(self, user_id: uuid.UUID) -> list[Grant]:
        grants = await self.store.grants_of(user_id, limit=MAX_GRANTS + 1)
        self._remember(user_id, grants)
        return grants

    def _read_done(self, user_id: uuid.UUID, reading: asyncio.Task[list[Grant]]) -> None:
        self._reading.pop(user_id, None)
        if not reading.cancelled():
            reading.exception()  # its waiters raise it; none left waiting is no leak

    def _remember(self, user_id: uuid.UUID, grants: list[Grant]) -> None:
        now = time.monotonic()
        if len(self._grants) >= _CACHE_LIMIT:
            self._grants = {u: c for u, c in self._grants.items() if c[0] > now}
            if len(self._grants) >= _CACHE_LIMIT:
                self._grants.clear()
        self._grants[user_id] = (now + self.ttl, grants)


def _names_project(selector: Selector, project_id: uuid.UUID) -> bool:
    """A key names its own project by id only (it knows no organization slugs)."""
    return selector.project_id == project_id


def _scoped(identity: Identity, acting: Grant | None, grants: list[Grant]) -> Identity:
    return identity.model_copy(
        update={
            "project_id": str(acting.project_id) if acting is not None else None,
            "project_role": acting.role if acting is not None else None,
            "grants": tuple((str(g.project_id), g.role) for g in grants),
        }
    )
