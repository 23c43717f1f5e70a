"""Fair dispatch's order (domain/fair_dispatch.py): rounds over the projects with work
waiting, by weight, each project's queues in turn, rows of no project first."""

from __future__ import annotations

import uuid
from typing import NamedTuple

from jobs_scheduler.domain.fair_dispatch import fair_order

A, B, C = (uuid.UUID(int=n) for n in (1, 2, 3))


class Row(NamedTuple):
    id: int
    project: uuid.UUID | None
    queue: str = "default"


def order(rows: list[Row], weights: dict[uuid.UUID, int] | None = None) -> list[int]:
    ranked = fair_order(
        rows,
        row_id=lambda row: row.id,
        pair=lambda row: None if row.project is None else (row.project, row.queue),
        weights=weights or {},
    )
    return [row.id for row in ranked]


def test_a_flood_and_a_single_job_alternate_in_rounds() -> None:
    rows = [Row(n, A) for n in range(1, 6)] + [Row(6, B)]
    assert order(rows) == [1, 6, 2, 3, 4, 5]


def test_a_weight_gives_that_many_dispatches_a_round() -> None:
    rows = [Row(n, A) for n in range(1, 7)] + [Row(n, B) for n in range(7, 10)]
    assert order(rows, {A: 2}) == [1, 2, 7, 3, 4, 8, 5, 6, 9]


def test_a_projects_queues_take_turns_within_its_share() -> None:
    rows = [Row(1, A, "x"), Row(2, A, "x"), Row(3, A, "x"), Row(4, A, "y"), Row(5, C)]
    assert order(rows) == [1, 5, 4, 2, 3]


def test_rows_of_no_project_go_first_and_the_input_order_does_not_matter() -> None:
    rows = [Row(3, B), Row(1, A), Row(2, None), Row(4, A)]
    assert order(rows) == [2, 1, 3, 4]


def test_a_weight_out_of_range_is_held_within_it() -> None:
    rows = [Row(1, A), Row(2, A), Row(3, B)]
    assert order(rows, {A: 0}) == [1, 3, 2]
