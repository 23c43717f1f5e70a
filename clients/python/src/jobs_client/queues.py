"""``jobs.queues`` of the blocking client: the project's queues, ``/api/queues``. The
requests are built in :mod:`jobs_client.queue_calls` and run through the request loop of
:mod:`jobs_client.sync_base`; :mod:`jobs_client.async_queues` is its mirror.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Unpack

from jobs_client import calls, queue_calls
from jobs_client.errors import Conflict
from jobs_client.queue_calls import QueueSettings
from jobs_client.queue_models import Queue
from jobs_client.sync_base import SyncBase


class Queues:
    """``jobs.queues``: the queues of the client's project (``project=``, else your default
    one), ``/api/queues``. Reading takes a viewer of the project, the rest an admin
    (:class:`~jobs_client.Forbidden` otherwise). The settings are those of
    :class:`~jobs_client.queue_calls.QueueSettings`: a rate is a :class:`RateLimit` or text
    such as ``"20/s"``, a concurrency key a :class:`ConcurrencyKey` or ``"customerId:2"``."""

    def __init__(self, client: SyncBase) -> None:
        self._client = client

    def list(
        self, name: str | None = None, *, page_size: int = calls.MAX_PAGE_SIZE
    ) -> Iterator[Queue]:
        """The project's queues (``name``: only that one), page after page as you iterate."""
        return self._client._items(
            lambda n: queue_calls.list_queues(name=name, page_number=n, page_size=page_size)
        )

    def get(self, queue_id: str) -> Queue:
        return self._client._run(queue_calls.get_queue(queue_id))

    def by_name(self, name: str) -> Queue | None:
        """The project's queue of that name, or None."""
        return next((q for q in self.list(name) if q.name == name), None)

    def create(
        self, name: str, *, paused: bool | None = None, **settings: Unpack[QueueSettings]
    ) -> Queue:
        """A new queue (:class:`~jobs_client.Conflict` when the project has one of that
        name); what is None or left out is not sent (no limit, no default, not paused)."""
        body = queue_calls.queue_settings(**settings)
        return self._client._run(queue_calls.create_queue(name, body, paused=paused))

    def update(self, queue_id: str, **settings: Unpack[QueueSettings]) -> Queue:
        """Change the settings given and only those; None removes a limit or a default."""
        body = queue_calls.queue_settings(**settings)
        return self._client._run(queue_calls.update_queue(queue_id, body))

    def set(self, name: str, **settings: Unpack[QueueSettings]) -> Queue:
        """The queue of that name with these settings: changed (as :meth:`update`) when the
        project has it, else created with them."""
        body = queue_calls.queue_settings(**settings)
        found = self.by_name(name)
        if found is None:
            try:
                return self._client._run(queue_calls.create_queue(name, body, paused=None))
            except Conflict:
                found = self.by_name(name)  # created meanwhile by someone else: change it
                if found is None:
                    raise
        if not body:
            return found
        return self._client._run(queue_calls.update_queue(found.id, body))

    def pause(self, queue_id_or_name: str) -> Queue:
        """Pause the queue (by id, or by name: :class:`~jobs_client.NotFound` when the project
        has none of that name)."""
        return self._client._run(queue_calls.queue_action(self._id_of(queue_id_or_name), "pause"))

    def resume(self, queue_id_or_name: str) -> Queue:
        return self._client._run(queue_calls.queue_action(self._id_of(queue_id_or_name), "resume"))

    def delete(self, queue_id: str) -> None:
        """Delete the queue (:class:`~jobs_client.Conflict` while it has unfinished jobs)."""
        self._client._run(queue_calls.delete_queue(queue_id))

    def _id_of(self, queue_id_or_name: str) -> str:
        if queue_calls.is_queue_id(queue_id_or_name):
            return queue_id_or_name
        found = self.by_name(queue_id_or_name)
        if found is None:
            raise queue_calls.no_such_queue(queue_id_or_name)
        return found.id
