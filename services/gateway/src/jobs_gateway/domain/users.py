"""The user record and the rules on its fields."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from jobs_common.auth import Identity, Role

PASSWORD_MIN_LENGTH = 8
PASSWORD_MAX_LENGTH = 128
EMAIL_MAX_LENGTH = 320

DEMO_USERS: tuple[tuple[str, str, Role], ...] = (
    ("admin@test.com", "admin123", "admin"),
    ("user@test.com", "user123", "user"),
)


def normalize_email(email: str) -> str:
    return email.strip().lower()


@dataclass(frozen=True)
class User:
    id: UUID
    email: str
    password_hash: str
    role: Role
    created_at: datetime

    def identity(self) -> Identity:
        return Identity(user_id=str(self.id), email=self.email, role=self.role)
