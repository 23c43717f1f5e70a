"""The demo data of development (``make dev``): the first system's own seed, organizations
with members in each role and their projects, beside the platform's two demo logins
(``DEMO_USERS``). Their passwords are published: never seeded outside development."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from jobs_common.tenancy import OrgRole

TEAM_PASSWORD: Final = "password123"


@dataclass(frozen=True)
class DemoAccount:
    email: str
    password: str
    description: str


@dataclass(frozen=True)
class DemoOrganization:
    name: str
    slug: str
    members: tuple[tuple[str, OrgRole], ...]  # the first is the one who creates it
    projects: tuple[tuple[str, str], ...]  # (name, slug)


DEMO_TEAM: Final = (
    DemoAccount("admin@example.com", TEAM_PASSWORD, "Alice Admin: owner of Acme Corp"),
    DemoAccount("dev@example.com", TEAM_PASSWORD, "Bob Developer: admin of Acme Corp"),
    DemoAccount("viewer@example.com", TEAM_PASSWORD, "Carol Viewer: viewer of Acme Corp"),
)

DEMO_ORGANIZATIONS: Final = (
    DemoOrganization(
        "Acme Corp",
        "acme-corp",
        members=(
            ("admin@example.com", OrgRole.OWNER),
            ("dev@example.com", OrgRole.ADMIN),
            ("viewer@example.com", OrgRole.VIEWER),
        ),
        projects=(("Web App", "web-app"), ("Background Jobs", "background-jobs")),
    ),
    DemoOrganization(
        "Startup Inc",
        "startup-inc",
        members=(("dev@example.com", OrgRole.OWNER), ("admin@example.com", OrgRole.MEMBER)),
        projects=(("Analytics Pipeline", "analytics-pipeline"),),
    ),
)
