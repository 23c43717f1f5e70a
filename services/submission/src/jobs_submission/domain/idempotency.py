"""Where an Idempotency-Key is kept: unique per project (docs/tenancy.md).

``projectIdempotencyKey`` holds every key, under a unique index on (``projectId``, it). A
submission to its owner's personal default project keeps the key in ``idempotencyKey`` too,
the field of the releases before projects (unique per owner, their index): during a rolling
deploy a retry that reaches a replica of either release still finds the first submission,
and a document stored before projects needs no migration (it is in that personal project).
"""

from __future__ import annotations

from typing import Any, Final

from jobs_common.tenancy import personal_project_id

OWNER_FIELD: Final = "idempotencyKey"
PROJECT_FIELD: Final = "projectIdempotencyKey"
PROJECT_INDEX: Final = "projectId_projectIdempotencyKey_unique"


def _personal(owner: str, project: str) -> bool:
    return project == str(personal_project_id(owner))


def key_fields(key: str | None, *, owner: str, project: str) -> dict[str, str | None]:
    """The key's fields of a new document (a batch's members have none: nothing to derive)."""
    personal = key is not None and _personal(owner, project)
    return {OWNER_FIELD: key if personal else None, PROJECT_FIELD: key}


def key_of(document: dict[str, Any]) -> str | None:
    key = document.get(PROJECT_FIELD) or document.get(OWNER_FIELD)
    return key if isinstance(key, str) else None


def holders(key: str, *, owner: str, project: str) -> list[dict[str, Any]]:
    """The filters that find the submission holding ``key`` in ``project``, in order (the
    second finds one stored before projects, or by the previous release)."""
    found = [{"projectId": {"$eq": project}, PROJECT_FIELD: {"$eq": key}}]
    if _personal(owner, project):
        found.append({"submittedBy": {"$eq": owner}, OWNER_FIELD: {"$eq": key}})
    return found
