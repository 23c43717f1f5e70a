"""Password hashing runs at most ``concurrency`` at a time; the rest wait for a slot."""

from __future__ import annotations

import asyncio
import threading

import pytest

from jobs_gateway.adapters.passwords import Passwords
from jobs_testing.waiting import eventually

pytestmark = pytest.mark.unit


class GatedHasher:
    """A stand-in for argon2 that holds every call until ``gate`` opens and records how many
    calls ran at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0

    def _enter(self) -> None:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        self.gate.wait(timeout=30)
        with self.lock:
            self.inside -= 1

    def hash(self, password: str) -> str:
        self._enter()
        return f"hashed:{password}"

    def verify(self, password: str, hash: str) -> bool:
        self._enter()
        return hash == f"hashed:{password}"


async def test_at_most_concurrency_hashes_run_at_once_and_the_rest_queue() -> None:
    hasher = GatedHasher()
    passwords = Passwords(concurrency=2, hasher=hasher)
    calls: list[asyncio.Task[object]] = [
        *(asyncio.create_task(passwords.hash(f"p{i}")) for i in range(3)),
        *(asyncio.create_task(passwords.verify("p0", "hashed:p0")) for _ in range(2)),
    ]

    async def two_inside_three_queued() -> bool:
        return hasher.inside == 2 and passwords.queued == 3

    await eventually(two_inside_three_queued, timeout=10, what="two running, three queued")
    hasher.gate.set()
    results = await asyncio.gather(*calls)
    assert results == ["hashed:p0", "hashed:p1", "hashed:p2", True, True]
    assert hasher.most == 2
    assert passwords.queued == 0


async def test_an_unknown_user_is_verified_against_a_dummy_hash_within_the_bound() -> None:
    hasher = GatedHasher()
    hasher.gate.set()
    passwords = Passwords(concurrency=1, hasher=hasher)
    assert await passwords.verify("anything", None) is False
    assert hasher.most == 1


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Passwords(concurrency=0)
