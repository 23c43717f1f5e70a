"""Project API keys: created (shown once), listed, revoked by the project's admins, and the
check of a presented key (docs/tenancy.md, "API keys").

A key is checked against its row on every request (one lookup by its unique prefix): a
revoked or expired key is refused at once on every gateway replica, with no cache to outlive
the revocation. Its last use is recorded at most once per ``touch_every`` per replica, so a
busy key costs no write per request."""

from __future__ import annotations

import logging
import time
import uuid
from datetime import datetime

from jobs_common.auth import Identity
from jobs_common.contracts import utcnow
from jobs_common.errors import NotFound, Unauthorized
from jobs_common.tenancy import OrgRole
from jobs_gateway.adapters.api_keys import ApiKeyStore
from jobs_gateway.app.tenancy import Paging, Tenancy
from jobs_gateway.domain.api_keys import ApiKey, KeyRole, generate, matches, prefix_of
from jobs_gateway.domain.audit import AuditAction, of_project

log = logging.getLogger(__name__)

INVALID_KEY = "invalid API key"


class ApiKeys:
    def __init__(self, store: ApiKeyStore, tenancy: Tenancy, *, touch_every: float = 60.0) -> None:
        self.store = store
        self.tenancy = tenancy
        self.touch_every = touch_every
        self._touched: dict[uuid.UUID, float] = {}

    async def create(
        self,
        identity: Identity,
        project_id: uuid.UUID,
        *,
        name: str,
        role: KeyRole,
        expires_at: datetime | None,
    ) -> tuple[ApiKey, str]:
        """The new key and its secret (the only time it is shown)."""
        project = await self.tenancy.project_with_role(identity, project_id, OrgRole.ADMIN)
        new = generate()
        key = await self.store.create(
            project_id=project_id,
            name=name,
            role=role,
            new=new,
            created_by=identity.email,
            expires_at=expires_at,
            audit=of_project(
                AuditAction.API_KEY_CREATED,
                identity.email,
                project,
                new.prefix,
                name=name,
                role=role,
            ),
        )
        log.info(
            "API key created",
            extra={"action": "api_key_created", "key_id": str(key.id), "prefix": key.prefix},
        )
        return key, new.key

    async def of_project(
        self, identity: Identity, project_id: uuid.UUID, paging: Paging
    ) -> tuple[list[ApiKey], int]:
        await self.tenancy.project_with_role(identity, project_id, OrgRole.ADMIN)
        return await self.store.of_project(project_id, offset=paging.offset, limit=paging.limit)

    async def revoke(self, identity: Identity, project_id: uuid.UUID, key_id: uuid.UUID) -> None:
        project = await self.tenancy.project_with_role(identity, project_id, OrgRole.ADMIN)
        audit = of_project(AuditAction.API_KEY_REVOKED, identity.email, project)
        if await self.store.revoke(project_id, key_id, identity.email, audit=audit) is None:
            raise NotFound("no such API key in this project")
        log.info("API key revoked", extra={"action": "api_key_revoked", "key_id": str(key_id)})

    async def authenticate(self, presented: str) -> ApiKey:
        """The key ``presented`` names, if it is that key's secret and usable now; 401 alike
        for a malformed, unknown, wrong, revoked or expired key."""
        prefix = prefix_of(presented)
        found = await self.store.by_prefix(prefix) if prefix is not None else None
        if found is None or not matches(presented, found[1]):
            raise Unauthorized(INVALID_KEY)
        key = found[0]
        if not key.usable_at(utcnow()):
            raise Unauthorized("API key revoked or expired")
        await self._touch(key.id)
        return key

    async def _touch(self, key_id: uuid.UUID) -> None:
        now = time.monotonic()
        if now - self._touched.get(key_id, -self.touch_every) < self.touch_every:
            return
        self._touched[key_id] = now
        if len(self._touched) > 10_000:  # forget the oldest half; they are touched again
            for stale in sorted(self._touched, key=self._touched.__getitem__)[:5_000]:
                del self._touched[stale]
        await self.store.touch(key_id)
