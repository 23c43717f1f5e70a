"""Refresh-token families: the rules applied when a refresh token is presented.

A login starts a family; every refresh uses its token once and issues the next one in the same
family (rotation). A token presented again after it was used is a stolen copy or a replay:
the whole family is revoked, so neither the thief nor the owner can go on with it and the
owner has to log in again. Logout revokes the family of the token it is given.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Refusal(StrEnum):
    """Why a refresh token may not be used (each answers 401)."""

    UNKNOWN = "unknown"  # no row: purged, its user deleted, or never issued here
    REUSED = "reused"  # used before: a replay; its family is revoked
    REVOKED = "revoked"  # its family was revoked (logout, reuse)
    EXPIRED = "expired"
    USER_GONE = "user_gone"  # the user row is gone (the current row decides)


@dataclass(frozen=True)
class StoredRefresh:
    """A refresh token's row as the store holds it."""

    token_id: uuid.UUID
    family_id: uuid.UUID
    user_id: uuid.UUID
    expires_at: datetime
    used_at: datetime | None
    revoked_at: datetime | None


def refusal(stored: StoredRefresh | None, *, user_id: uuid.UUID, now: datetime) -> Refusal:
    """Why the token of ``stored`` (presented for ``user_id``) cannot be used now.

    Called when the guarded use (unused, unrevoked, unexpired) did not take the token; a
    used token counts as reused even when its family is already revoked."""
    if stored is None or stored.user_id != user_id:
        return Refusal.UNKNOWN
    if stored.used_at is not None:
        return Refusal.REUSED
    if stored.revoked_at is not None:
        return Refusal.REVOKED
    if stored.expires_at <= now:
        return Refusal.EXPIRED
    # Usable by its fields yet not taken: another use took it between the two reads.
    return Refusal.REUSED


def revokes_family(reason: Refusal) -> bool:
    """A replay (or a use for a user that is gone) ends the whole family."""
    return reason in (Refusal.REUSED, Refusal.USER_GONE)
