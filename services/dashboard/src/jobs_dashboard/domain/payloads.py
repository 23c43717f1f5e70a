"""Payload validation shared by requeues and schedule templates: every type's, the built-in
ones too, by the submission service, which owns the type registry (``adapters/job_types.py``)
and checks a payload against the schema the type's worker announced."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail
from jobs_common.topology import DEFAULT_QUEUE


@dataclass(frozen=True)
class CheckedPayload:
    """A payload as a submission of its type stores it, with the type's queue and defaults
    (``None``: the platform's)."""

    payload: dict[str, Any]
    queue: str = DEFAULT_QUEUE
    max_attempts: int | None = None
    timeout_seconds: int | None = None


class TypeChecker(Protocol):
    """Checks a payload of a type as a submission would (``adapters.job_types``)."""

    async def check(
        self, job_type: str, payload: dict[str, Any], *, identity: Identity, prefix: str
    ) -> CheckedPayload: ...


def moved_under(detail: ErrorDetail, prefix: str) -> ErrorDetail:
    """A detail about ``payload.x`` (or ``type``) reported under ``prefix`` instead."""
    field = detail.field
    if field == "payload" or field.startswith("payload."):
        field = prefix + field.removeprefix("payload")
    elif field == "type":
        field = prefix.rsplit(".", 1)[0] + ".type" if "." in prefix else "type"
    return detail.model_copy(update={"field": field})


async def check_payload(
    job_type: str,
    payload: Mapping[str, Any],
    *,
    prefix: str,
    identity: Identity,
    types: TypeChecker,
) -> CheckedPayload:
    """``payload`` checked for ``job_type`` by the registry's owner, as a submission of it
    would be: ValidationFailed (field paths under ``prefix``) for a bad payload or a type no
    worker has announced."""
    return await types.check(job_type, dict(payload), identity=identity, prefix=prefix)
