"""A user's project grants are read once per cache period, and requests that find the cache
stale together share one read (``ProjectScopes``): a burst of requests is not a burst of
membership queries."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

import pytest

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole, personal_project_id
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.app.project_scope import ProjectScopes
from jobs_gateway.domain.project_scope import Grant

pytestmark = pytest.mark.unit

USER = Identity(user_id=str(uuid.uuid4()), email="ann@example.com", role="user")
PERSONAL = Grant(personal_project_id(USER.email), "default", "ann-1", OrgRole.OWNER)


class CountingGrants:
    """The one store call ProjectScopes makes for a user, counted and held until released."""

    def __init__(self) -> None:
        self.reads = 0
        self.release = asyncio.Event()

    async def grants_of(self, user_id: uuid.UUID, *, limit: int) -> list[Grant]:
        self.reads += 1
        await self.release.wait()
        return [PERSONAL]


async def test_concurrent_requests_share_one_read_and_the_cache_serves_the_next() -> None:
    store = CountingGrants()
    scopes = ProjectScopes(cast(TenancyStore, store), ttl=60)
    burst = [asyncio.create_task(scopes.of_user(USER, None)) for _ in range(20)]
    await asyncio.sleep(0.01)
    store.release.set()
    scoped: list[Any] = await asyncio.gather(*burst)
    assert store.reads == 1
    assert {s.project_id for s in scoped} == {str(PERSONAL.project_id)}
    await scopes.of_user(USER, None)
    assert store.reads == 1


async def test_a_stale_cache_is_read_again() -> None:
    store = CountingGrants()
    store.release.set()
    scopes = ProjectScopes(cast(TenancyStore, store), ttl=0)
    for _ in range(3):
        await scopes.of_user(USER, None)
    assert store.reads == 3


async def test_a_caller_cancelled_while_waiting_leaves_the_read_to_the_others() -> None:
    store = CountingGrants()
    scopes = ProjectScopes(cast(TenancyStore, store), ttl=60)
    first = asyncio.create_task(scopes.of_user(USER, None))
    second = asyncio.create_task(scopes.of_user(USER, None))
    await asyncio.sleep(0.01)
    first.cancel()
    store.release.set()
    assert (await second).project_id == str(PERSONAL.project_id)
    assert store.reads == 1
