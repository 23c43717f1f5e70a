"""``jobs.queues`` of the asyncio client, the mirror of :mod:`jobs_client.queues` method for
method (``list`` is an async iterator, the rest are awaited).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Unpack

from jobs_client import calls, queue_calls
from jobs_client.async_base import AsyncBase
from jobs_client.errors import Conflict
from jobs_client.queue_calls import QueueSettings
from jobs_client.queue_models import Queue


class AsyncQueues:
    """``jobs.queues`` of :class:`jobs_client.AsyncJobsClient`: :class:`jobs_client.queues.Queues`
    for asyncio."""

    def __init__(self, client: AsyncBase) -> None:
        self._client = client

    def list(
        self, name: str | None = None, *, page_size: int = calls.MAX_PAGE_SIZE
    ) -> AsyncIterator[Queue]:
        return self._client._items(
            lambda n: queue_calls.list_queues(name=name, page_number=n, page_size=page_size)
        )

    async def get(self, queue_id: str) -> Queue:
        return await self._client._run(queue_calls.get_queue(queue_id))

    async def by_name(self, name: str) -> Queue | None:
        async for queue in self.list(name):
            if queue.name == name:
                return queue
        return None

    async def create(
        self, name: str, *, paused: bool | None = None, **settings: Unpack[QueueSettings]
    ) -> Queue:
        body = queue_calls.queue_settings(**settings)
        return await self._client._run(queue_calls.create_queue(name, body, paused=paused))

    async def update(self, queue_id: str, **settings: Unpack[QueueSettings]) -> Queue:
        body = queue_calls.queue_settings(**settings)
        return await self._client._run(queue_calls.update_queue(queue_id, body))

    async def set(self, name: str, **settings: Unpack[QueueSettings]) -> Queue:
        body = queue_calls.queue_settings(**settings)
        found = await self.by_name(name)
        if found is None:
            try:
                return await self._client._run(queue_calls.create_queue(name, body, paused=None))
            except Conflict:
                found = await self.by_name(name)  # created meanwhile by someone else
                if found is None:
                    raise
        if not body:
            return found
        return await self._client._run(queue_calls.update_queue(found.id, body))

    async def pause(self, queue_id_or_name: str) -> Queue:
        queue_id = await self._id_of(queue_id_or_name)
        return await self._client._run(queue_calls.queue_action(queue_id, "pause"))

    async def resume(self, queue_id_or_name: str) -> Queue:
        queue_id = await self._id_of(queue_id_or_name)
        return await self._client._run(queue_calls.queue_action(queue_id, "resume"))

    async def delete(self, queue_id: str) -> None:
        await self._client._run(queue_calls.delete_queue(queue_id))

    async def _id_of(self, queue_id_or_name: str) -> str:
        if queue_calls.is_queue_id(queue_id_or_name):
            return queue_id_or_name
        found = await self.by_name(queue_id_or_name)
        if found is None:
            raise queue_calls.no_such_queue(queue_id_or_name)
        return found.id
