"""The gateway's own PostgreSQL schema ``gateway`` (never the job store's tables)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

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

# One row per refresh token ever issued (by its jti: the token itself is never stored, so a
# reader of this table cannot use or mint one). Rows of a login share ``family_id``.
refresh_tokens = sa.Table(
    "refresh_tokens",
    metadata,
    sa.Column("id", sa.Uuid(), primary_key=True),
    sa.Column("family_id", sa.Uuid(), nullable=False),
    sa.Column(
        "user_id",
        sa.Uuid(),
        sa.ForeignKey("gateway.users.id", ondelete="CASCADE", name="refresh_tokens_user_id_fkey"),
        nullable=False,
    ),
    sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("replaced_by", sa.Uuid(), nullable=True),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    sa.Index("refresh_tokens_family_id_idx", "family_id"),
    sa.Index("refresh_tokens_user_id_idx", "user_id"),
    sa.Index("refresh_tokens_expires_at_idx", "expires_at"),
)

# Hits per (scope, key) in one fixed window, shared by every gateway replica.
rate_limit_counters = sa.Table(
    "rate_limit_counters",
    metadata,
    sa.Column("scope", sa.Text(), nullable=False),
    sa.Column("key", sa.Text(), nullable=False),
    sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
    sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
    sa.Column("hits", sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint("scope", "key", "window_start", name="rate_limit_counters_pkey"),
    sa.Index("rate_limit_counters_window_end_idx", "window_end"),
)


# Organizations (docs/tenancy.md): a personal one per user, created with the user; others by
# any user, who becomes their owner.
organizations = sa.Table(
    "organizations",
    metadata,
    sa.Column("id", sa.Uuid(), primary_key=True),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("slug", sa.Text(), nullable=False),
    sa.Column("personal", sa.Boolean(), nullable=False, server_default=sa.false()),
    sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    ),
    sa.UniqueConstraint("slug", name="organizations_slug_key"),
)

memberships = sa.Table(
    "memberships",
    metadata,
    sa.Column(
        "organization_id",
        sa.Uuid(),
        sa.ForeignKey(
            "gateway.organizations.id", ondelete="CASCADE", name="memberships_organization_id_fkey"
        ),
        nullable=False,
    ),
    sa.Column(
        "user_id",
        sa.Uuid(),
        sa.ForeignKey("gateway.users.id", ondelete="CASCADE", name="memberships_user_id_fkey"),
        nullable=False,
    ),
    sa.Column("role", sa.Text(), nullable=False),
    sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    ),
    sa.PrimaryKeyConstraint("organization_id", "user_id", name="memberships_pkey"),
    sa.CheckConstraint(
        "role IN ('owner', 'admin', 'member', 'viewer')", name="memberships_role_check"
    ),
    sa.Index("memberships_user_id_idx", "user_id"),
)

projects = sa.Table(
    "projects",
    metadata,
    sa.Column("id", sa.Uuid(), primary_key=True),
    sa.Column(
        "organization_id",
        sa.Uuid(),
        sa.ForeignKey(
            "gateway.organizations.id", ondelete="CASCADE", name="projects_organization_id_fkey"
        ),
        nullable=False,
    ),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("slug", sa.Text(), nullable=False),
    sa.Column("created_by", sa.Text(), nullable=False),
    sa.Column("personal_default", sa.Boolean(), nullable=False, server_default=sa.false()),
    sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    ),
    sa.UniqueConstraint("organization_id", "slug", name="projects_organization_id_slug_key"),
)


# Project API keys (domain/api_keys.py): the SHA-256 of each key, never the key; revoked keys
# stay (revoked_at, revoked_by) so what a key did stays attributable.
api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("id", sa.Uuid(), primary_key=True),
    sa.Column(
        "project_id",
        sa.Uuid(),
        sa.ForeignKey("gateway.projects.id", ondelete="CASCADE", name="api_keys_project_id_fkey"),
        nullable=False,
    ),
    sa.Column("name", sa.Text(), nullable=False),
    sa.Column("role", sa.Text(), nullable=False),
    sa.Column("prefix", sa.Text(), nullable=False),
    sa.Column("secret_hash", sa.Text(), nullable=False),
    sa.Column("created_by", sa.Text(), nullable=False),
    sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    ),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revoked_by", sa.Text(), nullable=True),
    sa.UniqueConstraint("prefix", name="api_keys_prefix_key"),
    sa.CheckConstraint("role IN ('member', 'viewer')", name="api_keys_role_check"),
    sa.Index("api_keys_project_id_idx", "project_id"),
)

audit_events = sa.Table(
    "audit_events",
    metadata,
    sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
    sa.Column("organization_id", sa.Uuid(), nullable=False),
    sa.Column("project_id", sa.Uuid(), nullable=True),
    sa.Column("actor", sa.Text(), nullable=False),
    sa.Column("action", sa.Text(), nullable=False),
    sa.Column("subject", sa.Text(), nullable=True),
    sa.Column("details", JSONB(), server_default="{}", nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    sa.Index("ix_audit_events_organization", "organization_id", "id"),
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
