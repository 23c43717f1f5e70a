"""Fair dispatch (docs/flow-control.md, "Fair dispatch"): the order in which the relay sends
the dispatches waiting for one ready queue once the broker holds a full window of it.

The projects with work waiting are served in rounds: each round sends up to ``weight`` of
each project's dispatches (a project without a weight: 1), oldest first, and within a project
its queues take turns. In a round, the dispatches go in the order they were written. A flood
of one project therefore delays another project's job by at most one round, not by the
flood's length.

Other outbox rows (cancel requests, claim answers: no project) go before any dispatch."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_WEIGHT = 100


def fair_order(
    rows: Sequence[T],
    *,
    row_id: Callable[[T], int],
    pair: Callable[[T], tuple[uuid.UUID, str] | None],
    weights: Mapping[uuid.UUID, int],
) -> list[T]:
    """``rows`` in the order fair dispatch sends them: rows of no project first, then by
    round (a project's n-th dispatch, counted over its queues in turn, is in round
    ``n // weight``), then by id."""
    by_pair: dict[tuple[uuid.UUID, str], list[T]] = {}
    unowned: list[T] = []
    for row in sorted(rows, key=row_id):
        key = pair(row)
        if key is None:
            unowned.append(row)
        else:
            by_pair.setdefault(key, []).append(row)
    # A project's queues in turn: its k-th dispatch of each queue, queues by name.
    by_project: dict[uuid.UUID, list[tuple[int, str, int, T]]] = {}
    for (project, queue), queued in by_pair.items():
        for turn, row in enumerate(queued):
            by_project.setdefault(project, []).append((turn, queue, row_id(row), row))
    ranked: list[tuple[int, int, T]] = []
    for project, entries in by_project.items():
        weight = max(1, min(MAX_WEIGHT, weights.get(project, 1)))
        entries.sort(key=lambda entry: entry[:3])
        for turn, (_, _, ident, row) in enumerate(entries):
            ranked.append((turn // weight, ident, row))
    ranked.sort(key=lambda entry: entry[:2])
    return unowned + [row for _, _, row in ranked]
