"""How many ready messages wait in a queue: the backlog a dispatch joins, from which the relay
sizes its fresh window (``domain.claims.fresh_window``). Asked of the broker with a passive
declare on a channel of this adapter's own (a refused declare closes its channel, never the
relay's publishing one), at most once per ``refresh`` seconds per queue."""

from __future__ import annotations

import asyncio
import logging
import time

from aio_pika.abc import AbstractChannel, AbstractRobustConnection

log = logging.getLogger(__name__)


class QueueDepths:
    def __init__(
        self, connection: AbstractRobustConnection, *, refresh: float = 0.5, timeout: float = 1.0
    ) -> None:
        self.connection = connection
        self.refresh = refresh
        self.timeout = timeout  # a broker that does not answer holds no relay pass longer
        self._channel: AbstractChannel | None = None
        self._known: dict[str, tuple[float, int]] = {}  # queue -> (read at, ready messages)

    async def depth(self, queue: str) -> int | None:
        """Ready messages in ``queue`` as last read (None: unknown, the broker did not say)."""
        reading = await self.reading(queue)
        return None if reading is None else reading[1]

    async def reading(self, queue: str, max_age: float | None = None) -> tuple[float, int] | None:
        """When (``time.monotonic``) the ready messages of ``queue`` were read, and how many
        there were: read again when the last reading is older than ``max_age`` (by default
        ``refresh``). None: unknown, the broker did not say."""
        now = time.monotonic()
        known = self._known.get(queue)
        if known is not None and now - known[0] < (self.refresh if max_age is None else max_age):
            return known
        try:
            async with asyncio.timeout(self.timeout):
                if self._channel is None or self._channel.is_closed:
                    self._channel = await self.connection.channel(publisher_confirms=False)
                # The plain channel underneath: a queue declared here is not one to restore.
                underlay = await self._channel.get_underlay_channel()
                declared = await underlay.queue_declare(queue, passive=True)
        except Exception:
            log.debug("queue depth unknown", extra={"queue": queue}, exc_info=True)
            self._channel = None
            return None
        self._known[queue] = (now, int(declared.message_count or 0))
        return self._known[queue]
