"""The resolved dead letters' page and count as indexed reads (docs/operations.md, "After a
prune"): the statements ``DeadLetterStore.page`` runs, explained with sequential scans off
(the planner then still reads the whole table through any index if nothing serves the filter
and order), and the count without the join answering as the join does."""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.jobstore import dead_letters, jobs
from jobs_common.tenancy import Scope
from jobs_dashboard.adapters.dead_letters import DeadLetterStore
from jobs_dashboard.domain.dead_letters import DeadLetterFilters, DeadLetterState
from jobs_dashboard.domain.query import PageRequest

pytestmark = pytest.mark.integration

OTHER = "other@test.com"


@contextmanager
def statements(engine: AsyncEngine) -> Iterator[list[tuple[str, Any]]]:
    """The SELECTs ``engine`` runs meanwhile, with their driver parameters."""
    seen: list[tuple[str, Any]] = []

    def grab(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", grab)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", grab)


async def plans(engine: AsyncEngine, seen: list[tuple[str, Any]]) -> list[str]:
    async with engine.connect() as connection:
        await connection.execute(text("SET enable_seqscan = off"))
        return [
            "\n".join((await connection.exec_driver_sql(f"EXPLAIN {sql}", params)).scalars())
            for sql, params in seen
        ]


async def letters(job_factory: Any) -> dict[str, list[uuid.UUID]]:
    """Dead jobs' letters, two in three resolved, one job in four another owner's."""
    base = job_factory.base_time
    made: dict[str, list[uuid.UUID]] = {"resolved": [], "open": [], "other": []}
    for n in range(12):
        theirs = n % 4 == 3
        job_id = await job_factory.job(status="dead", **({"submitted_by": OTHER} if theirs else {}))
        created = base + timedelta(minutes=n)
        resolved = n % 3 != 0
        letter = await job_factory.dead_letter(
            job_id,
            created_at=created,
            **({"resolved_at": created + timedelta(hours=1)} if resolved else {}),
        )
        made["resolved" if resolved else "open"].append(letter)
        if theirs and resolved:
            made["other"].append(letter)
    return made


async def test_resolved_letters_are_paged_and_counted_from_their_index(
    store_engine: AsyncEngine, job_factory: Any
) -> None:
    await letters(job_factory)
    async with store_engine.connect() as connection:  # the visibility map set, as a store's
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        await connection.execute(text("VACUUM ANALYZE dead_letters"))
    store = DeadLetterStore(store_engine)
    resolved = DeadLetterFilters(visibility=Scope(), state=DeadLetterState.RESOLVED)
    with statements(store_engine) as seen:
        await store.page(resolved, PageRequest(page_size=5))
    count, page = await plans(store_engine, seen)

    assert "Index Only Scan using ix_dead_letters_resolved" in count, count
    assert "jobs" not in count, count  # nothing on the job asked: no join
    assert "Index Scan Backward using ix_dead_letters_resolved" in page, page
    assert "Sort" not in page, page  # newest first is the index's order


async def test_the_count_without_the_join_is_the_joins(
    store_engine: AsyncEngine, job_factory: Any
) -> None:
    made = await letters(job_factory)
    store = DeadLetterStore(store_engine)
    joined = dead_letters.join(jobs, jobs.c.id == dead_letters.c.job_id)
    for state, expected in (
        (DeadLetterState.RESOLVED, len(made["resolved"])),
        (DeadLetterState.OPEN, len(made["open"])),
        (DeadLetterState.ALL, len(made["resolved"]) + len(made["open"])),
    ):
        items, total = await store.page(
            DeadLetterFilters(visibility=Scope(), state=state), PageRequest(page_size=100)
        )
        assert total == len(items) == expected
        assert await store.count(DeadLetterFilters(visibility=Scope(), state=state)) == expected
    async with store_engine.connect() as connection:
        assert await connection.scalar(
            select(func.count()).select_from(joined).where(dead_letters.c.resolved_at.is_not(None))
        ) == len(made["resolved"])

    # a condition on the job keeps the join: the other owner's resolved letters only
    theirs = DeadLetterFilters(visibility=Scope(owner=OTHER), state=DeadLetterState.RESOLVED)
    items, total = await store.page(theirs, PageRequest(page_size=100))
    assert total == len(made["other"]) > 0
    assert {item.id for item in items} == set(made["other"])
    assert [item.created_at for item in items] == sorted(
        (item.created_at for item in items), reverse=True
    )
