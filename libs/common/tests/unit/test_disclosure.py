"""What a job's owner reads of the scheduler's texts: no worker, no other person's email."""

from __future__ import annotations

import pytest

from jobs_common.disclosure import fingerprint_for_owner, for_owner, person_for_owner

pytestmark = pytest.mark.unit

OWNER = "user@test.com"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("started on web-1-4711-1a2b3c4d", "started on a worker"),
        ("redelivered; taken over by web-2-99-ffee0011", "redelivered; taken over by a worker"),
        ("worker web-1-4711-1a2b3c4d went silent", "the worker went silent"),
        ("worker w stopped renewing the lease", "the worker stopped renewing the lease"),
        ("cancelled by admin@test.com", "cancelled by an administrator"),
        (
            "requeue by Admin@Test.com; not before 2025-01-01",
            "requeue by an administrator; not before 2025-01-01",
        ),
        ("cancelled by User@Test.com", "cancelled by User@Test.com"),
        ("retry_scheduled", "retry_scheduled"),
    ],
)
def test_for_owner(text: str, expected: str) -> None:
    assert for_owner(text, owner=OWNER) == expected


def test_known_worker_ids_are_replaced_wherever_they_appear() -> None:
    text = "lost on web-1-4711-1a2b3c4d after 3 s"
    assert for_owner(text, owner=OWNER, worker_ids=["web-1-4711-1a2b3c4d", None]) == (
        "lost on a worker after 3 s"
    )


def test_people_and_fingerprints() -> None:
    assert person_for_owner("admin@test.com", owner=OWNER) == "an administrator"
    assert person_for_owner("USER@test.com", owner=OWNER) == "USER@test.com"
    assert person_for_owner(None, owner=OWNER) is None
    assert fingerprint_for_owner("LeaseExpired: worker web-<n>-<n>a went silent") == (
        "LeaseExpired: the worker went silent"
    )
    assert fingerprint_for_owner("RuntimeError: boom <n>") == "RuntimeError: boom <n>"
