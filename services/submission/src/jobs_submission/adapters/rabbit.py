"""The broker connection, opened lazily: the HTTP API works while the broker is down."""

from __future__ import annotations

import asyncio
import logging

from jobs_common.rabbit import RabbitBus

log = logging.getLogger(__name__)


class BrokerUnavailable(Exception):
    """No connection to RabbitMQ right now."""


class BusHolder:
    """Owns the process's :class:`RabbitBus`; connects on first use and after failures.

    Once open, aio-pika's robust connection reconnects by itself; ``connected`` reports
    whether it is usable at this moment.
    """

    def __init__(self, url: str, *, name: str, connect_timeout: float = 10.0) -> None:
        self.url = url
        self.name = name
        self.connect_timeout = connect_timeout
        self._bus: RabbitBus | None = None
        self._lock = asyncio.Lock()

    @property
    def connected(self) -> bool:
        return self._bus is not None and not self._bus.connection.is_closed

    @property
    def broken(self) -> bool:
        """Connected with a closed publishing channel (:attr:`RabbitBus.channel_broken`)."""
        return self._bus is not None and self._bus.channel_broken

    async def get(self) -> RabbitBus:
        if self._bus is not None:
            if self._bus.connection.is_closed:
                raise BrokerUnavailable("broker connection is closed (reconnecting)")
            return self._bus
        async with self._lock:
            if self._bus is None:
                try:
                    async with asyncio.timeout(self.connect_timeout):
                        self._bus = await RabbitBus.open(self.url, name=self.name)
                except Exception as exc:
                    raise BrokerUnavailable(f"cannot connect to the broker: {exc!r}") from exc
                log.info("broker connected", extra={"action": "broker_connected"})
            return self._bus

    async def close(self) -> None:
        if self._bus is not None:
            bus, self._bus = self._bus, None
            try:
                await bus.close()
            except Exception:
                log.warning("broker close failed", extra={"action": "broker_close"}, exc_info=True)
