"""Organizations, projects and roles: the names every service shares (docs/tenancy.md).

A user who registers gets a personal organization with a ``default`` project. Their ids are
derived from the email, so that a store without the gateway's tables (the job store, whose
migration moves existing jobs into their owner's default project) computes the same ids
without asking: ``md5(prefix || lower(email))`` read as a UUID, in Python and in SQL alike.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

PERSONAL_ORG_PREFIX: Final = "jobs-personal-organization:"
PERSONAL_PROJECT_PREFIX: Final = "jobs-personal-project:"
DEFAULT_PROJECT_SLUG: Final = "default"


class OrgRole(StrEnum):
    """A member's role in an organization, most to least: each may do what the ones below
    may, and more."""

    OWNER = "owner"  # members, roles, the organization itself
    ADMIN = "admin"  # projects, queues, schedules, retry policies, API keys
    MEMBER = "member"  # submit, retry, cancel, requeue, discard
    VIEWER = "viewer"  # read only

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def at_least(self, other: OrgRole) -> bool:
        return self.rank >= other.rank


_RANKS: Final = {OrgRole.VIEWER: 0, OrgRole.MEMBER: 1, OrgRole.ADMIN: 2, OrgRole.OWNER: 3}


def _derived(prefix: str, email: str) -> uuid.UUID:
    return uuid.UUID(hashlib.md5((prefix + email.strip().lower()).encode()).hexdigest())


def personal_organization_id(email: str) -> uuid.UUID:
    return _derived(PERSONAL_ORG_PREFIX, email)


def personal_project_id(email: str) -> uuid.UUID:
    """The id of the default project of ``email``'s personal organization."""
    return _derived(PERSONAL_PROJECT_PREFIX, email)


def personal_project_id_sql(email_column: str) -> str:
    """The same id as :func:`personal_project_id`, as a SQL expression over a text column."""
    return f"md5('{PERSONAL_PROJECT_PREFIX}' || lower({email_column}))::uuid"


def personal_organization_id_sql(email_column: str) -> str:
    return f"md5('{PERSONAL_ORG_PREFIX}' || lower({email_column}))::uuid"


@dataclass(frozen=True)
class Scope:
    """Which rows a caller may read or change (docs/tenancy.md, "Who sees what").

    ``projects``: only these projects' rows (None: not limited by project). ``owner``: only
    this person's rows (None: anyone's). ``Identity.scope`` gives it for a role: the projects
    where the caller holds at least that role; the platform admin is limited by neither; a
    caller the gateway did not scope (a backend's own call, a test) by its own rows."""

    owner: str | None = None
    projects: frozenset[uuid.UUID] | None = None

    def narrowed_to(self, project_id: uuid.UUID) -> Scope:
        """This scope within one project (a ``projectId`` filter): nothing outside it."""
        inside = {project_id} if self.projects is None else self.projects & {project_id}
        return Scope(self.owner, frozenset(inside))
