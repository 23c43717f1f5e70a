"""Organizations, memberships and projects: the records and the rules on their fields."""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from jobs_common.tenancy import OrgRole

NAME_MAX_LENGTH: Final = 100
SLUG_MAX_LENGTH: Final = 48
SLUG_PATTERN: Final = r"^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$"
_SLUG = re.compile(SLUG_PATTERN)
PERSONAL_PROJECT_NAME: Final = "Default"


def is_slug(text: str) -> bool:
    return _SLUG.fullmatch(text) is not None


def slugify(text: str, *, max_length: int = SLUG_MAX_LENGTH) -> str:
    """Lowercase ASCII letters, digits and single hyphens (``Acme Corp`` -> ``acme-corp``);
    ``x`` when nothing of ``text`` is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:max_length].strip("-")
    return slug or "x"


def personal_slug(email: str) -> str:
    """A personal organization's slug: the email's local part and six hex digits of its
    hash (two users with the same local part never share one)."""
    digest = hashlib.md5(email.strip().lower().encode()).hexdigest()[:6]
    return f"{slugify(email.split('@', 1)[0], max_length=SLUG_MAX_LENGTH - 7)}-{digest}"


@dataclass(frozen=True)
class Organization:
    id: uuid.UUID
    name: str
    slug: str
    personal: bool
    created_at: datetime


@dataclass(frozen=True)
class Membership:
    organization: Organization
    role: OrgRole | None  # None: a platform admin who is not a member


@dataclass(frozen=True)
class Member:
    user_id: uuid.UUID
    email: str
    role: OrgRole
    added_at: datetime


@dataclass(frozen=True)
class Project:
    id: uuid.UUID
    organization_id: uuid.UUID
    name: str
    slug: str
    created_by: str
    created_at: datetime
    personal_default: bool  # the default project of a personal organization
