"""A consumed batch that meets a deadlock or a serialization failure is tried again in place,
never requeued: requeued, it would come back behind the read ticks this replica applies
meanwhile, and the read horizon would pass a heartbeat not applied yet (its leases judged
expired, their jobs run again)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common import topology
from jobs_common.jobstore import workers
from jobs_common.rabbit import RabbitBus
from jobs_scheduler.service import Runtime
from jobs_testing.waiting import eventually

from .conftest import heartbeat

pytestmark = pytest.mark.integration

CONFLICTS = "scheduler_lock_conflicts_total"
SETTLED = "jobs_deliveries_settled_total"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
async def one_injected_deadlock(db: AsyncEngine) -> AsyncIterator[None]:
    """The next write of a ``workers`` row fails once with SQLSTATE 40P01, as a deadlock
    does (a sequence counts the writes: it is not rolled back with the failed transaction)."""
    async with db.begin() as connection:
        await connection.exec_driver_sql("CREATE SEQUENCE injected_deadlock")
        await connection.exec_driver_sql(
            "CREATE FUNCTION inject_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF nextval('injected_deadlock') = 1 THEN "
            "RAISE EXCEPTION 'injected deadlock' USING ERRCODE = 'deadlock_detected'; END IF; "
            "RETURN NEW; END $$"
        )
        await connection.exec_driver_sql(
            "CREATE TRIGGER inject_deadlock BEFORE INSERT OR UPDATE ON workers "
            "FOR EACH ROW EXECUTE FUNCTION inject_deadlock()"
        )
    yield
    async with db.begin() as connection:
        await connection.exec_driver_sql("DROP TRIGGER inject_deadlock ON workers")
        await connection.exec_driver_sql("DROP FUNCTION inject_deadlock()")
        await connection.exec_driver_sql("DROP SEQUENCE injected_deadlock")


async def test_a_heartbeat_batch_that_meets_a_deadlock_is_applied_in_place_not_requeued(
    bus: RabbitBus, db: AsyncEngine, scheduler: Runtime, one_injected_deadlock: None
) -> None:
    conflicts = sample(CONFLICTS, queue=topology.HEARTBEAT)
    requeued = sample(SETTLED, queue=topology.HEARTBEAT, action="requeue")
    await bus.publisher.publish(topology.HEARTBEAT, heartbeat("w-conflict"))

    async def recorded() -> bool:
        async with db.connect() as connection:
            found = await connection.execute(
                select(workers.c.id).where(workers.c.id == "w-conflict")
            )
            return found.first() is not None

    await eventually(recorded, what="the heartbeat applied")
    assert sample(CONFLICTS, queue=topology.HEARTBEAT) == conflicts + 1
    assert sample(SETTLED, queue=topology.HEARTBEAT, action="requeue") == requeued
