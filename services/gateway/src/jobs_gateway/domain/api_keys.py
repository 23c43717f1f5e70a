"""Project API keys: their format and how a presented key is matched to its row.

A key reads ``jk_<prefix>_<secret>``: eight lowercase letters and digits that name the key in
listings and find its row, then 43 characters of URL-safe base64 (32 random bytes). The
database keeps the prefix and the SHA-256 of the whole key, never the key: a reader of the
table cannot use one. A fast hash is enough where the secret carries 256 bits of entropy
(nothing to guess); the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

KEY_PREFIX: Final = "jk_"
PREFIX_LENGTH: Final = 8
_KEY = re.compile(r"^jk_(?P<prefix>[a-z0-9]{8})_(?P<secret>[A-Za-z0-9_-]{43})$")
_ALPHABET: Final = string.ascii_lowercase + string.digits

KeyRole = Literal["member", "viewer"]


@dataclass(frozen=True)
class NewKey:
    prefix: str
    key: str  # shown once, at creation
    secret_hash: str


def generate() -> NewKey:
    prefix = "".join(secrets.choice(_ALPHABET) for _ in range(PREFIX_LENGTH))
    key = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return NewKey(prefix=prefix, key=key, secret_hash=digest(key))


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def looks_like_key(token: str) -> bool:
    """Whether a presented credential is meant as an API key (it is then never tried as a
    JWT, and a malformed one is refused as a key)."""
    return token.startswith(KEY_PREFIX)


def prefix_of(key: str) -> str | None:
    """The prefix of a well-formed key, or None."""
    match = _KEY.fullmatch(key)
    return match["prefix"] if match else None


def matches(key: str, secret_hash: str) -> bool:
    return hmac.compare_digest(digest(key), secret_hash)


@dataclass(frozen=True)
class ApiKey:
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    role: KeyRole
    prefix: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None

    def usable_at(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)
