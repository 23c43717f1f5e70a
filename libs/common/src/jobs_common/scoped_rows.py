"""A :class:`~jobs_common.tenancy.Scope` as SQL: the WHERE clauses keeping a table's rows
within it, given the table's owner and project columns."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement

from jobs_common.tenancy import Scope


def visible(
    scope: Scope, *, owner: ColumnElement[Any], project: ColumnElement[Any]
) -> list[ColumnElement[bool]]:
    """Each owned table has an index led by its project column (the job store's migration
    0013), so a listing within a scope reads only its projects' rows."""
    conditions: list[ColumnElement[bool]] = []
    if scope.projects is not None:
        conditions.append(project.in_(sorted(scope.projects)))
    if scope.owner is not None:
        conditions.append(owner == scope.owner)
    return conditions
