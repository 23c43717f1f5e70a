"""Alembic environment for the gateway schema only (own version table, advisory lock)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from jobs_common.migrations import run_env
from jobs_gateway.adapters.tables import SCHEMA, include_name, metadata


def _create_schema(connection: Connection) -> None:
    connection.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"'))


run_env(
    metadata=metadata,
    version_table="alembic_version_gateway",
    version_table_schema=SCHEMA,
    lock_key=7_100_100_001,
    include_name=include_name,
    prepare=_create_schema,
)
