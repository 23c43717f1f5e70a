"""The parents' results a DAG child's dispatch carries (docs/sdk.md, "Parent results"):
read for the jobs with parents only (``jobs.has_parents``), one statement for all of a
transaction's dispatches. A result larger than the dispatch may carry never leaves the
database: it is named with its size, the handler told why it cannot read it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import Text, case, cast, func, select
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import PARENT_RESULTS_MAX_BYTES, ParentResult
from jobs_common.jobstore import job_dependencies, jobs
from jobs_scheduler.adapters.set_based import any_of

_child = jobs.alias("child")
_parent = jobs.alias("parent")
# The stored JSON's text length: a little above the message's compact JSON, so a bound on it
# is a bound on the message.
_SIZE = func.octet_length(cast(_parent.c.result, Text))
PARENTS = (
    select(
        job_dependencies.c.job_id.label("child_id"),
        _parent.c.id,
        # A ref names a parent only among the members of the child's own batch.
        case((_parent.c.batch_id == _child.c.batch_id, _parent.c.ref)).label("ref"),
        _SIZE.label("size"),
        case((_SIZE <= PARENT_RESULTS_MAX_BYTES, _parent.c.result)).label("result"),
    )
    .select_from(
        job_dependencies.join(_parent, _parent.c.id == job_dependencies.c.depends_on).join(
            _child, _child.c.id == job_dependencies.c.job_id
        )
    )
    .where(job_dependencies.c.job_id == any_of("children", UUID(as_uuid=True)))
    .order_by(job_dependencies.c.job_id, job_dependencies.c.depends_on)
)


async def parents_of(
    connection: AsyncConnection, children: Iterable[uuid.UUID], max_bytes: int
) -> dict[uuid.UUID, list[ParentResult]]:
    """Each child's parents (in id order) with their results, at most ``max_bytes`` of
    results to a child: the results past it are ``omitted`` (with their ``size``)."""
    rows = await connection.execute(PARENTS, {"children": sorted(set(children))})
    found: dict[uuid.UUID, list[ParentResult]] = {}
    spent: dict[uuid.UUID, int] = {}
    for row in rows:
        size = row.size or 0
        total = spent.get(row.child_id, 0) + size
        fits = row.size is None or (row.result is not None and total <= max_bytes)
        if fits:
            spent[row.child_id] = total
        found.setdefault(row.child_id, []).append(
            ParentResult(
                job_id=row.id,
                ref=row.ref,
                result=row.result if fits else None,
                omitted=not fits,
                size=row.size,
            )
        )
    return found
