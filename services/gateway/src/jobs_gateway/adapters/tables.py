"""The gateway's own PostgreSQL schema ``gateway`` (never the job store's tables)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import sqlalchemy as sa

SCHEMA = "gateway"

metadata = sa.MetaData(schema=SCHEMA)

users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Uuid(), primary_key=True),
    sa.Column("email", sa.Text(), nullable=False),
    sa.Column("password_hash", sa.Text(), nullable=False),
    sa.Column("role", sa.Text(), nullable=False),
    sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    ),
    sa.CheckConstraint("role IN ('admin', 'user')", name="users_role_check"),
    sa.CheckConstraint("email = lower(email)", name="users_email_lowercase_check"),
    sa.UniqueConstraint("email", name="users_email_key"),
)


def include_name(name: str | None, type_: str, parent_names: MutableMapping[Any, Any]) -> bool:
    """Alembic filter: only objects of schema ``gateway``; the job store is never compared."""
    if type_ == "schema":
        return name == SCHEMA
    if type_ == "table":
        return parent_names.get("schema_name") == SCHEMA and not (name or "").startswith(
            "alembic_version"
        )
    return True
