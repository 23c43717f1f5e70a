"""Which project a request acts in (docs/tenancy.md, "Naming a project").

A request names its project with ``X-Project`` or the ``projectId`` query parameter: the
project's id, its slug where that is unique among the caller's projects, or
``<organization slug>/<project slug>``. Without one it acts in the caller's personal default
project (an API key: in its own project) and reads every project the caller may see.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlencode

from jobs_common.errors import BadRequest, NotFound
from jobs_common.tenancy import OrgRole

PROJECT_HEADER: Final = "x-project"
PROJECT_QUERY: Final = "projectId"
# The projects a request without a named project reads, forwarded in one header: a caller who
# sees more names the project it means (a header of this many pairs stays under 12 KiB).
MAX_GRANTS: Final = 250
SELECTOR_MAX_LENGTH: Final = 200
NOT_FOUND: Final = "project not found"


@dataclass(frozen=True)
class Grant:
    """A project the caller may see, with their role in its organization."""

    project_id: uuid.UUID
    slug: str
    organization_slug: str
    role: OrgRole


@dataclass(frozen=True)
class Selector:
    """A project as a request names it: an id, or a slug with or without its organization."""

    project_id: uuid.UUID | None = None
    organization_slug: str | None = None
    slug: str | None = None


def parse_selector(text: str) -> Selector:
    text = text.strip()
    if not text or len(text) > SELECTOR_MAX_LENGTH or not text.isprintable():
        raise BadRequest("X-Project / projectId: a project's id, slug or <org slug>/<slug>")
    try:
        return Selector(project_id=uuid.UUID(text))
    except ValueError:
        pass
    organization, _, slug = text.rpartition("/")
    return Selector(organization_slug=organization or None, slug=slug)


def with_project_id(query: str, project_id: str | None) -> str:
    """``query`` with its ``projectId`` (an id, a slug or ``<org>/<slug>``, as the client
    named it) replaced by the id the gateway resolved, so a backend reads an id only."""
    if project_id is None or PROJECT_QUERY not in query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(name == PROJECT_QUERY for name, _ in pairs):
        return query
    return urlencode([(n, project_id if n == PROJECT_QUERY else v) for n, v in pairs])


def pick(selector: Selector, grants: list[Grant]) -> Grant:
    """The caller's grant the selector names: 404 when none (another organization's project
    is not found either), 400 when a bare slug names several."""
    found = [g for g in grants if _names(selector, g)]
    if not found:
        raise NotFound(NOT_FOUND)
    if len(found) > 1:
        raise BadRequest(
            f"several of your projects have the slug {selector.slug!r}: name it as "
            "<organization slug>/<project slug> or by id"
        )
    return found[0]


def _names(selector: Selector, grant: Grant) -> bool:
    if selector.project_id is not None:
        return grant.project_id == selector.project_id
    if selector.organization_slug is not None and selector.organization_slug != (
        grant.organization_slug
    ):
        return False
    return grant.slug == selector.slug
