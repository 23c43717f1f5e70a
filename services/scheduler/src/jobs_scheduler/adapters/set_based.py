"""SQL expressions shared by the scheduler's adapters."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Table, bindparam, cast, column, func, select
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, Insert, insert
from sqlalchemy.types import TypeEngine


def interval_seconds(value: Any) -> Any:
    """``value`` seconds as a PostgreSQL interval (a number or a column expression)."""
    return func.make_interval(0, 0, 0, 0, 0, 0, value)


def vouched(sent_at: Any) -> Any:
    """The moment a worker's message (a heartbeat, a start) vouches for: its own send time, so
    a message read late still counts from when it was sent, but never later than now, so a
    worker whose clock runs ahead stretches no lease (``test_a_heartbeat_vouches_for_its_send
    _time_never_later_than_it_was_applied``)."""
    return func.least(sent_at, func.now())


def json_text(value: Any) -> str | None:
    """A JSON value for a text column of :class:`ArrayRows` (cast to jsonb in the SQL)."""
    return None if value is None else json.dumps(value, separators=(",", ":"))


class ArrayRows:
    """A FROM item ``unnest(:name_a, :name_b, ...) AS name(a, b, ...)``: a batch of rows
    passed as one array per column.

    A statement built on it has the same text whatever the number of rows, so SQLAlchemy
    compiles it once and asyncpg prepares it once; a ``VALUES`` list or an ``IN`` list would
    make a new statement for every batch size (a fifth of the scheduler's CPU under load).
    JSON goes in as text (:func:`json_text`), cast to jsonb where it is used.
    """

    def __init__(self, name: str, **columns: TypeEngine[Any]) -> None:
        self.name = name
        self.columns = columns
        self.table = (
            func.unnest(*(bindparam(self._param(c), type_=ARRAY(t)) for c, t in columns.items()))
            .table_valued(*(column(c, t) for c, t in columns.items()), name=name)
            .render_derived()
        )
        self.c = self.table.c

    def _param(self, name: str) -> str:
        return f"{self.name}_{name}"

    def params(self, rows: Iterable[Sequence[Any]]) -> dict[str, list[Any]]:
        """The execution parameters for ``rows`` (tuples in the order of the columns)."""
        arrays: list[list[Any]] = [[] for _ in self.columns]
        for row in rows:
            for array, value in zip(arrays, row, strict=True):
                array.append(value)
        return {self._param(c): a for c, a in zip(self.columns, arrays, strict=True)}

    def insert_into(self, table: Table, *, json: tuple[str, ...] = ()) -> Insert:
        """``INSERT INTO table (columns) SELECT ... FROM unnest(...)``, the ``json`` columns
        cast from text to jsonb."""
        return insert(table).from_select(
            list(self.columns),
            select(*(cast(self.c[c], JSONB) if c in json else self.c[c] for c in self.columns)),
        )


def any_of(name: str, type_: TypeEngine[Any], values: Iterable[Any] | None = None) -> Any:
    """``= ANY(:name)`` for an array parameter: one statement text for any number of values
    (bound here when ``values`` are given, else passed at execution)."""
    if values is None:
        return func.any(bindparam(name, type_=ARRAY(type_)))
    return func.any(bindparam(name, list(values), type_=ARRAY(type_)))
