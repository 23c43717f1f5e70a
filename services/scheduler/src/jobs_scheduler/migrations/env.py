"""Alembic environment for the job store (own version table, advisory lock)."""

from __future__ import annotations

from typing import Any

from jobs_common.jobstore import metadata
from jobs_common.migrations import run_env


def _include_name(name: str | None, type_: str, _parents: dict[str, Any]) -> bool:
    return not (type_ == "table" and (name or "").startswith("alembic_version"))


run_env(
    metadata=metadata,
    version_table="alembic_version_scheduler",
    lock_key=7_201_001,
    include_name=_include_name,
)
