"""What a job's owner may read of the texts the platform writes about the job (timeline
reasons, errors), when the owner is not an admin. One rule for the dashboard's answers and the
gateway's live events.

The scheduler writes who did what into those texts: the worker that ran an attempt (its id
embeds the host name and pid: ``started on host-4711-1a2b3c4d``, ``worker ... went silent``)
and the person who cancelled or requeued the job (``cancelled by admin@example.com``). Worker
internals are for admins; another person's email too. Owners read ``a worker`` and ``an
administrator`` instead (their own address stays: they did it themselves).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ADMINISTRATOR = "an administrator"
A_WORKER = "a worker"

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")

# The scheduler's texts that name a worker. Each pattern is also valid as a PostgreSQL regular
# expression with the same replacement (``regexp_replace(..., 'g')``), so that a dead letter's
# fingerprint can be grouped and filtered by what its owner reads (jobs_dashboard).
WORKER_SILENT = (r"worker \S+ (went silent|stopped renewing the lease)", r"the worker \1")
_WORKER_MENTIONS = (
    (re.compile(r"(started on|taken over by) \S+"), r"\1 " + A_WORKER),
    (re.compile(WORKER_SILENT[0]), WORKER_SILENT[1]),
)


def for_owner(text: str, *, owner: str, worker_ids: Iterable[str | None] = ()) -> str:
    """``text`` as ``owner`` may read it: workers named (by the scheduler's phrases, or by any
    id in ``worker_ids``) become "a worker", emails other than ``owner``'s "an
    administrator"."""
    for pattern, replacement in _WORKER_MENTIONS:
        text = pattern.sub(replacement, text)
    for worker_id in sorted({w for w in worker_ids if w}, key=len, reverse=True):
        text = text.replace(worker_id, A_WORKER)
    mine = owner.strip().lower()
    return _EMAIL.sub(lambda match: match[0] if match[0].lower() == mine else ADMINISTRATOR, text)


def person_for_owner(person: str | None, *, owner: str) -> str | None:
    """Who acted (``cancel_requested_by``, ``resolved_by``) as ``owner`` may read it."""
    if person is None or person.strip().lower() == owner.strip().lower():
        return person
    return ADMINISTRATOR


def fingerprint_for_owner(fingerprint: str) -> str:
    """A dead letter's fingerprint as its owner reads it (and groups and filters by it): the
    worker named in a lost lease's error removed. Ids, numbers and emails are masked in every
    fingerprint already. The same rewrite in SQL: :data:`WORKER_SILENT`."""
    return re.sub(WORKER_SILENT[0], WORKER_SILENT[1], fingerprint)
