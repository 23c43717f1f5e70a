"""Handlers registry: job type -> HandlerSpec (payload model + coroutine)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from jobs_worker.domain.context import Registry
from jobs_worker.handlers import email, image_resize, simulate
from jobs_worker.handlers.report_generation import ReportGeneration


def default_registry(*, engine: AsyncEngine) -> Registry:
    return {
        "email": email.SPEC,
        "image_resize": image_resize.SPEC,
        "report_generation": ReportGeneration(engine).spec(),
        "simulate": simulate.SPEC,
    }
