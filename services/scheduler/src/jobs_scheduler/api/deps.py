"""What the internal API's routes take from the app: the engine, the unit of work, and which
rows the caller may change."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole, Scope
from jobs_scheduler.app.unit_of_work import UnitOfWork


def engine_of(request: Request) -> AsyncEngine:
    engine: AsyncEngine = request.app.state.engine
    return engine


def work_of(request: Request) -> UnitOfWork:
    work: UnitOfWork = request.app.state.work
    return work


def scope_of(identity: Identity, at_least: OrgRole) -> Scope:
    """The rows the caller may change with ``at_least`` that role: the projects of its grants
    where it holds it (the gateway forwarded them), every row for the platform admin; a
    caller the gateway did not scope changes its own rows only. Checked here again after the
    dashboard, so a dashboard bug cannot become a write in another project."""
    return identity.scope(at_least)
