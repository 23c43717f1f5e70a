"""Organizations, memberships and projects; every existing user gets a personal organization
(owner) with a default project, whose ids derive from the email (jobs_common.tenancy).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from jobs_common.tenancy import personal_organization_id_sql, personal_project_id_sql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The same slug as jobs_gateway.domain.tenancy.personal_slug: the local part (lowercase
# letters, digits, single hyphens, at most 41 characters) and six hex digits of md5(email).
PERSONAL_SLUG_SQL = (
    "coalesce(nullif(trim(BOTH '-' FROM left(trim(BOTH '-' FROM "
    "regexp_replace(lower(split_part(u.email, '@', 1)), '[^a-z0-9]+', '-', 'g')), 41)), ''), "
    "'x') || '-' || left(md5(lower(u.email)), 6)"
)


def upgrade() -> None:
    op.create_table(
        "organizations",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("slug", sa.Text(), nullable=False),
        sa.Column("personal", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name="organizations_pkey"),
        sa.UniqueConstraint("slug", name="organizations_slug_key"),
        schema="gateway",
    )
    op.create_table(
        "memberships",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "role IN ('owner', 'admin', 'member', 'viewer')", name="memberships_role_check"
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["gateway.organizations.id"],
            name="memberships_organization_id_fkey",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["gateway.users.id"], name="memberships_user_id_fkey", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("organization_id", "user_id", name="memberships_pkey"),
        schema="gateway",
    )
    op.create_index("memberships_user_id_idx", "memberships", ["user_id"], schema="gateway")
    op.create_table(
        "projects",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("slug", sa.Text(), nullable=False),
        sa.Column("created_by", sa.Text(), nullable=False),
        sa.Column("personal_default", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["gateway.organizations.id"],
            name="projects_organization_id_fkey",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="projects_pkey"),
        sa.UniqueConstraint("organization_id", "slug", name="projects_organization_id_slug_key"),
        schema="gateway",
    )
    org_id = personal_organization_id_sql("u.email")
    op.execute(
        "INSERT INTO gateway.organizations (id, name, slug, personal, created_at) "
        f"SELECT {org_id}, u.email, {PERSONAL_SLUG_SQL}, true, u.created_at FROM gateway.users u"
    )
    op.execute(
        "INSERT INTO gateway.memberships (organization_id, user_id, role, created_at) "
        f"SELECT {org_id}, u.id, 'owner', u.created_at FROM gateway.users u"
    )
    op.execute(
        "INSERT INTO gateway.projects "
        "(id, organization_id, name, slug, created_by, personal_default, created_at) "
        f"SELECT {personal_project_id_sql('u.email')}, {org_id}, 'Default', 'default', u.email, "
        "true, u.created_at FROM gateway.users u"
    )


def downgrade() -> None:
    op.drop_table("projects", schema="gateway")
    op.drop_index("memberships_user_id_idx", table_name="memberships", schema="gateway")
    op.drop_table("memberships", schema="gateway")
    op.drop_table("organizations", schema="gateway")
