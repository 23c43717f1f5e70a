"""A relay pass records until when the first copies it publishes run unasked (their fresh
window, from the backlog ahead of them): a copy it could not confirm, sent again by a later
pass, asks past that window.

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "outbox_passes", sa.Column("fresh_until", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("outbox_passes", "fresh_until")
