"""argon2id password hashing (pwdlib), run off the event loop, a bounded number at a time.

A hash or verify costs tens of milliseconds of CPU and a chunk of memory: at most
``concurrency`` of them run at once (the rest wait their turn), so a flood of logins or
registrations queues instead of taking every core and the thread pool from the requests that
need neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, TypeVar

from pwdlib import PasswordHash

T = TypeVar("T")

DUMMY_PASSWORD = "not-a-real-password-for-timing"  # never stored, only hashed


class Hasher(Protocol):
    def hash(self, password: str) -> str: ...

    def verify(self, password: str, hash: str) -> bool: ...


class Passwords:
    def __init__(self, *, concurrency: int = 2, hasher: Hasher | None = None) -> None:
        if concurrency <= 0:
            raise ValueError("concurrency must be positive")
        self._hasher: Hasher = hasher or PasswordHash.recommended()
        self._slots = asyncio.Semaphore(concurrency)
        self._dummy_hash: str | None = None
        self.queued = 0  # calls waiting for a slot

    async def _bounded(self, work: Callable[..., T], *args: str) -> T:
        self.queued += 1
        try:
            await self._slots.acquire()
        finally:
            self.queued -= 1
        try:
            return await asyncio.to_thread(work, *args)
        finally:
            self._slots.release()

    async def hash(self, password: str) -> str:
        return await self._bounded(self._hasher.hash, password)

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Verify; with no hash (unknown user) verify against a dummy so timing matches."""
        if password_hash is None:
            if self._dummy_hash is None:
                self._dummy_hash = await self.hash(DUMMY_PASSWORD)
            await self._bounded(self._hasher.verify, password, self._dummy_hash)
            return False
        return await self._bounded(self._hasher.verify, password, password_hash)
