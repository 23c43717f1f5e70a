"""Why a refresh token cannot be used, and which refusals end the whole family."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from jobs_gateway.domain.sessions import Refusal, StoredRefresh, refusal, revokes_family

pytestmark = pytest.mark.unit

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
USER = uuid.UUID("00000000-0000-4000-8000-000000000001")


def stored(**fields: object) -> StoredRefresh:
    values: dict[str, object] = {
        "token_id": uuid.uuid4(),
        "family_id": uuid.uuid4(),
        "user_id": USER,
        "expires_at": NOW + timedelta(days=1),
        "used_at": None,
        "revoked_at": None,
    }
    values.update(fields)
    return StoredRefresh(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (None, Refusal.UNKNOWN),
        (stored(user_id=uuid.uuid4()), Refusal.UNKNOWN),
        (stored(used_at=NOW - timedelta(minutes=1)), Refusal.REUSED),
        (
            stored(used_at=NOW - timedelta(minutes=2), revoked_at=NOW - timedelta(minutes=1)),
            Refusal.REUSED,
        ),
        (stored(revoked_at=NOW - timedelta(minutes=1)), Refusal.REVOKED),
        (stored(expires_at=NOW), Refusal.EXPIRED),
        (stored(expires_at=NOW - timedelta(seconds=1)), Refusal.EXPIRED),
        # usable by its fields, yet the guarded use did not take it: a concurrent use did
        (stored(), Refusal.REUSED),
    ],
)
def test_refusal(row: StoredRefresh | None, expected: Refusal) -> None:
    assert refusal(row, user_id=USER, now=NOW) is expected


def test_only_a_replay_or_a_vanished_user_revokes_the_family() -> None:
    assert {reason for reason in Refusal if revokes_family(reason)} == {
        Refusal.REUSED,
        Refusal.USER_GONE,
    }
