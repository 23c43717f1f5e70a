"""What the internal API's routes take from the app: the engine, the unit of work, and whose
rows the caller may change."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_scheduler.app.unit_of_work import UnitOfWork


def engine_of(request: Request) -> AsyncEngine:
    engine: AsyncEngine = request.app.state.engine
    return engine


def work_of(request: Request) -> UnitOfWork:
    work: UnitOfWork = request.app.state.work
    return work


def owner_of(identity: Identity) -> str | None:
    """Whose rows the caller may change: None, everyone's (an admin)."""
    return None if identity.is_admin else identity.email
