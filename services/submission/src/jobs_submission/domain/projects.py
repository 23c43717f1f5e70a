"""The project a submission goes to, and whether the caller may submit there
(docs/tenancy.md): the one the body names (``projectId``), else the one the request names
(``X-Project``, resolved by the gateway), else the owner's personal default project."""

from __future__ import annotations

import uuid

from jobs_common.auth import Identity
from jobs_common.errors import BadRequest, Forbidden, NotFound
from jobs_common.tenancy import OrgRole, personal_project_id

PROJECT_NOT_FOUND = "project not found"


def project_for(named: str | None, owner: str, identity: Identity) -> str:
    """The project's id: 404 where the caller may not see it, 403 for a viewer."""
    if named is not None:
        project = named
    elif owner != identity.email.strip().lower():  # an admin on behalf of someone
        project = str(personal_project_id(owner))
    elif identity.project_id is not None:
        project = identity.project_id
    elif identity.grants is None:  # not scoped by the gateway: the personal project
        project = str(personal_project_id(owner))
    else:  # no longer a member of their personal organization
        raise BadRequest("name the project to submit to (projectId or X-Project)")
    role = identity.role_in(project)
    if role is None:
        raise NotFound(PROJECT_NOT_FOUND)
    if not role.at_least(OrgRole.MEMBER):
        raise Forbidden(f"a {role.value} may not submit jobs to this project")
    return project


def project_of(document: dict[str, object]) -> str:
    """A stored submission's project: its ``projectId``, or (stored by an earlier release)
    its owner's personal default project, where the job store's migration put it."""
    project = document.get("projectId")
    if isinstance(project, str):
        return project
    return str(personal_project_id(str(document["submittedBy"])))


def may_read(identity: Identity, document: dict[str, object]) -> bool:
    """Whether the caller sees a stored submission (or batch): a project of theirs."""
    return identity.role_in(project_of(document)) is not None


def as_id(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)
