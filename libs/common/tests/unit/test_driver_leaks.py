"""The hook that keeps PyMongo's leaked monitor sockets from failing unrelated tests drops
those and nothing else."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from jobs_testing.driver_leaks import MongoSocketLeaks


@pytest.fixture
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    mongo, other = socket.socket(), socket.socket()
    for listener in (mongo, other):
        listener.bind(("127.0.0.1", 0))
        listener.listen()
    yield mongo, other
    mongo.close()
    other.close()


@pytest.fixture
def reported() -> Iterator[list[tuple[type[BaseException], int | None]]]:
    """What reaches the hook behind the filter (pytest's, in a real run): the exception's type
    and, for a socket, its peer's port."""
    seen: list[tuple[type[BaseException], int | None]] = []

    def record(unraisable: Any) -> None:
        leaked = unraisable.object
        port = leaked.getpeername()[1] if isinstance(leaked, socket.socket) else None
        seen.append((type(unraisable.exc_value), port))

    previous = sys.unraisablehook
    sys.unraisablehook = record
    yield seen
    sys.unraisablehook = previous


def leak(listener: socket.socket) -> None:
    """A connected socket dropped without ``close()``: finalized with a ResourceWarning."""
    connected = socket.create_connection(listener.getsockname())
    del connected


@pytest.mark.filterwarnings("error::ResourceWarning")
def test_only_sockets_to_the_mongodb_port_are_dropped(
    listeners: tuple[socket.socket, socket.socket],
    reported: list[tuple[type[BaseException], int | None]],
) -> None:
    mongo, other = listeners
    leaks = MongoSocketLeaks(mongo.getsockname()[1])
    leaks.install()
    try:
        leak(mongo)
        leak(other)
    finally:
        leaks.uninstall()
    assert leaks.dropped == 1
    assert reported == [(ResourceWarning, other.getsockname()[1])]


def test_other_unraisable_exceptions_pass_through(
    reported: list[tuple[type[BaseException], int | None]],
) -> None:
    leaks = MongoSocketLeaks(27017)
    leaks.install()
    try:

        class Broken:
            def __del__(self) -> None:
                raise RuntimeError("in a finalizer")

        Broken()
    finally:
        leaks.uninstall()
    assert reported == [(RuntimeError, None)]
