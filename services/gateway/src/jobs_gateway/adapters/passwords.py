"""argon2id password hashing (pwdlib), run off the event loop."""

from __future__ import annotations

import asyncio

from pwdlib import PasswordHash


class Passwords:
    def __init__(self) -> None:
        self._hasher = PasswordHash.recommended()
        self._dummy_hash: str | None = None

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Verify; with no hash (unknown user) verify against a dummy so timing matches."""
        if password_hash is None:
            if self._dummy_hash is None:
                self._dummy_hash = await self.hash("not-a-real-password-for-timing")
            await asyncio.to_thread(self._hasher.verify, password, self._dummy_hash)
            return False
        return await asyncio.to_thread(self._hasher.verify, password, password_hash)
