"""The job types a submission may name, and the payload check of each.

Every type is one a worker announced (``WorkerTypes`` on ``jobs.types``, kept in MongoDB),
the built-in ones as much as a team's: its payload is checked against the JSON Schema its
handler published (``domain/payload_schemas.py``), and a submission that omits
``maxAttempts`` or ``timeoutSeconds`` gets the type's own defaults. A type no worker has
announced yet is refused, naming it, with the list of the known ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from jobs_common.errors import ErrorDetail
from jobs_common.payloads import BUILTIN_JOB_TYPES
from jobs_submission.domain.payload_schemas import PayloadSchema, payload_schema
from jobs_submission.domain.times import from_ms


@dataclass(frozen=True)
class AnnouncedType:
    """A job type a worker announced, as the registry keeps it."""

    job_type: str
    payload_schema: dict[str, Any]
    result_schema: dict[str, Any] | None
    queue: str
    timeout_seconds: int
    max_attempts: int
    slots: int
    updated_at: datetime | None = None
    compiled: PayloadSchema | None = field(default=None, compare=False, repr=False)

    @property
    def builtin(self) -> bool:
        """One of the types whose handlers ship with the worker."""
        return self.job_type in BUILTIN_JOB_TYPES

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> AnnouncedType:
        schema = dict(document["payloadSchema"])
        return cls(
            job_type=str(document["_id"]),
            payload_schema=schema,
            result_schema=document.get("resultSchema"),
            queue=str(document.get("queue") or "default"),
            timeout_seconds=int(document["timeoutSeconds"]),
            max_attempts=int(document["maxAttempts"]),
            slots=int(document.get("slots") or 1),
            updated_at=announced_at(document),
            compiled=payload_schema(schema),
        )


@dataclass(frozen=True)
class TypeCatalog:
    """A snapshot of the types workers have announced."""

    announced: Mapping[str, AnnouncedType] = field(default_factory=dict)

    def known(self) -> list[str]:
        return sorted(self.announced)

    def __contains__(self, job_type: object) -> bool:
        return job_type in self.announced

    def unknown(self, job_type: object, *, field: str) -> ErrorDetail:
        """The problem of a type no worker has announced yet, naming the known ones."""
        known = ", ".join(self.known()) or "none yet"
        return ErrorDetail(
            field=field,
            message=(
                f"unknown job type {job_type!r}: no worker has announced it yet "
                f"(start a worker that serves it); known types: {known}"
            ),
        )

    def defaults(self, job_type: str) -> tuple[int | None, int | None]:
        """``(max_attempts, timeout_seconds)`` the type gives a job that names none."""
        announced = self.announced.get(job_type)
        if announced is None:
            return None, None  # the scheduler's defaults
        return announced.max_attempts, announced.timeout_seconds

    def queue_of(self, job_type: str) -> str:
        """The named queue a job of the type goes to when the submission names none."""
        announced = self.announced.get(job_type)
        return "default" if announced is None else announced.queue

    def check_payload(
        self, job_type: str, payload: Mapping[str, Any], *, at: str
    ) -> tuple[dict[str, Any] | None, list[ErrorDetail]]:
        """The payload as stored (with its schema's defaults), or the problems with their
        field paths below ``at`` (``payload`` or ``jobs.3.payload``)."""
        announced = self.announced[job_type]
        return (announced.compiled or payload_schema(announced.payload_schema)).check(
            payload, at=at
        )


class TypeSource(Protocol):
    """Where the services get the catalog (``type_registry.TypeRegistry``)."""

    async def catalog_for(self, job_types: Iterable[object]) -> TypeCatalog: ...


async def known_types(source: TypeSource | None, job_types: Iterable[object]) -> TypeCatalog:
    """The catalog to check ``job_types`` against: an empty one without a registry."""
    return TypeCatalog() if source is None else await source.catalog_for(job_types)


def named_types(body: object) -> list[object]:
    """The types a batch body names (whatever their shape: the checks report bad ones)."""
    jobs = body.get("jobs") if isinstance(body, Mapping) else None
    if not isinstance(jobs, list):
        return []
    return [spec.get("type") for spec in jobs if isinstance(spec, Mapping)]


def announced_at(document: Mapping[str, Any]) -> datetime | None:
    """When a worker last announced the type's schema (``updatedAtMs``)."""
    ms = document.get("updatedAtMs")
    return None if ms is None else from_ms(int(ms))
