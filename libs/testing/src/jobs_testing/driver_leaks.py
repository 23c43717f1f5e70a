"""Sockets PyMongo's async driver leaks, kept from failing unrelated tests.

When an ``AsyncMongoClient`` closes while one of its server monitors is between connecting a
socket and wrapping it in a transport, the monitor's cancellation skips the socket's
``close()`` (pymongo 4.20, ``pool_shared._configured_protocol_interface``). The connected
socket is finalized later, at some garbage collection, with a ``ResourceWarning`` that pytest
(warnings as errors) reports in whichever test is running then.

:class:`MongoSocketLeaks` drops exactly those: unraisable ``ResourceWarning``\\ s of sockets
whose peer is the suite's MongoDB. Every other unraisable exception, a socket of ours among
them, still goes to pytest's hook and fails the test it surfaces in.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from typing import Any

UnraisableHook = Callable[[Any], object]


class MongoSocketLeaks:
    """An unraisable hook in front of pytest's, for the lifetime of one MongoDB server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.dropped = 0
        self._previous: UnraisableHook | None = None

    def install(self) -> None:
        self._previous = sys.unraisablehook
        sys.unraisablehook = self.hook

    def uninstall(self) -> None:
        if self._previous is not None and sys.unraisablehook == self.hook:
            sys.unraisablehook = self._previous
        self._previous = None

    def hook(self, unraisable: Any) -> None:
        if self.is_driver_leak(unraisable):
            self.dropped += 1
            return
        previous = self._previous or sys.__unraisablehook__
        previous(unraisable)

    def is_driver_leak(self, unraisable: Any) -> bool:
        """A ``ResourceWarning`` for a socket still connected to the MongoDB port."""
        leaked = unraisable.object
        if not isinstance(unraisable.exc_value, ResourceWarning):
            return False
        if not isinstance(leaked, socket.socket):
            return False
        try:
            peer = leaked.getpeername()
        except OSError:
            return False
        return isinstance(peer, tuple) and len(peer) >= 2 and peer[1] == self.port
