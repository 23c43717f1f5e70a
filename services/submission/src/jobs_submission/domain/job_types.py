"""The job types a submission may name, and the payload check of each.

The built-in types are checked by their pydantic models (``jobs_common.payloads``), with
everything those add (defaults, normalisation). Any other type is one a worker announced
(``WorkerTypes`` on ``jobs.types``, kept in MongoDB): its payload is bounded like every
payload (256 KiB of JSON) and checked against the JSON Schema the worker's handler
published, and a submission that omits ``maxAttempts`` or ``timeoutSeconds`` gets the
type's own defaults. An unknown type is refused with the list of the known ones."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import ValidationError

from jobs_common.errors import ErrorDetail
from jobs_common.payloads import MAX_PAYLOAD_BYTES, PAYLOAD_MODELS, json_size
from jobs_submission.domain.fields import field_details
from jobs_submission.domain.times import from_ms

MAX_DETAILS = 20  # field errors reported for one payload


@dataclass(frozen=True)
class CustomType:
    """A job type a worker announced, as the registry keeps it."""

    job_type: str
    payload_schema: dict[str, Any]
    result_schema: dict[str, Any] | None
    queue: str
    timeout_seconds: int
    max_attempts: int
    slots: int
    updated_at: datetime | None = None
    validator: Draft202012Validator | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> CustomType:
        schema = dict(document["payloadSchema"])
        try:
            Draft202012Validator.check_schema(schema)
            validator: Draft202012Validator | None = Draft202012Validator(schema)
        except SchemaError:
            validator = None  # refused at submission: "its schema is not valid JSON Schema"
        return cls(
            job_type=str(document["_id"]),
            payload_schema=schema,
            result_schema=document.get("resultSchema"),
            queue=str(document.get("queue") or "default"),
            timeout_seconds=int(document["timeoutSeconds"]),
            max_attempts=int(document["maxAttempts"]),
            slots=int(document.get("slots") or 1),
            updated_at=announced_at(document),
            validator=validator,
        )


@dataclass(frozen=True)
class TypeCatalog:
    """A snapshot of the known types: the built-ins and the announced ones."""

    custom: Mapping[str, CustomType] = field(default_factory=dict)

    def known(self) -> list[str]:
        return sorted({*PAYLOAD_MODELS, *self.custom})

    def __contains__(self, job_type: object) -> bool:
        return job_type in PAYLOAD_MODELS or job_type in self.custom

    def unknown(self, *, field: str) -> ErrorDetail:
        """The problem of a type this catalog does not know, naming the known ones."""
        return ErrorDetail(
            field=field, message=f"unknown job type; expected one of: {', '.join(self.known())}"
        )

    def defaults(self, job_type: str) -> tuple[int | None, int | None]:
        """``(max_attempts, timeout_seconds)`` the type gives a job that names none."""
        custom = self.custom.get(job_type)
        if custom is None or job_type in PAYLOAD_MODELS:
            return None, None  # the scheduler's defaults
        return custom.max_attempts, custom.timeout_seconds

    def queue_of(self, job_type: str) -> str:
        """The named queue a job of the type goes to: a built-in's is "default"."""
        custom = self.custom.get(job_type)
        return "default" if custom is None or job_type in PAYLOAD_MODELS else custom.queue

    def check_payload(
        self, job_type: str, payload: Mapping[str, Any], *, at: str
    ) -> tuple[dict[str, Any] | None, list[ErrorDetail]]:
        """The payload as stored (a built-in's normalised by its model), or the problems
        with their field paths below ``at`` (``payload`` or ``jobs.3.payload``)."""
        model = PAYLOAD_MODELS.get(job_type)
        if model is not None:
            try:
                return model.model_validate(payload).model_dump(mode="json", by_alias=True), []
            except ValidationError as exc:
                return None, field_details(exc.errors(), prefix=at)
        custom = self.custom[job_type]
        if custom.validator is None:
            return None, [ErrorDetail(field="type", message="its payload schema is not valid")]
        size = json_size(payload)
        if size > MAX_PAYLOAD_BYTES:  # the bound of every type, a schema's own bounds aside
            message = f"payload is {size} bytes of JSON; at most {MAX_PAYLOAD_BYTES} bytes"
            return None, [ErrorDetail(field=at or "payload", message=message)]
        errors = sorted(custom.validator.iter_errors(dict(payload)), key=lambda e: e.path)
        if errors:
            return None, [
                ErrorDetail(field=_joined(at, error.absolute_path), message=error.message)
                for error in errors[:MAX_DETAILS]
            ]
        return dict(payload), []


def _joined(at: str, path: Iterable[Any]) -> str:
    return ".".join([at, *(str(part) for part in path)]) if at else ".".join(map(str, path))


class TypeSource(Protocol):
    """Where the services get the catalog (``type_registry.TypeRegistry``)."""

    async def catalog_for(self, job_types: Iterable[object]) -> TypeCatalog: ...


async def known_types(source: TypeSource | None, job_types: Iterable[object]) -> TypeCatalog:
    """The catalog to check ``job_types`` against: the built-ins alone without a registry."""
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
