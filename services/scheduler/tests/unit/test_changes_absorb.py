"""A batch's side rows gathered under a savepoint join the transaction's (``Changes.absorb``):
every list, and each project's usage of the day added up."""

from __future__ import annotations

import uuid

from jobs_scheduler.adapters.side_rows import ATTEMPTS, RUN_SECONDS, SUBMITTED, Changes


def test_absorb_joins_the_rows_and_adds_the_usage() -> None:
    project = uuid.uuid4()
    target, source = Changes(), Changes()
    target.moves.append(("none", "pending"))
    target.used(project, SUBMITTED)
    source.moves.append(("pending", "queued"))
    source.used(project, SUBMITTED)
    source.used(project, ATTEMPTS)
    source.used(project, RUN_SECONDS, 1.5)
    source.used(None, SUBMITTED)  # no project: nothing metered
    target.absorb(source)
    assert target.moves == [("none", "pending"), ("pending", "queued")]
    assert list(target.usage.values()) == [[2, 1, 1.5, 0, 0]]
