"""Batches: validation of every spec, in-batch ``ref:`` resolution and cycle detection."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, EmailStr, Field, ValidationError

from jobs_common.api_models import CamelModel
from jobs_common.auth import Identity
from jobs_common.errors import ErrorDetail, ValidationFailed
from jobs_common.payloads import json_size
from jobs_submission.domain.fields import REF_PREFIX, field_details, is_ref_label
from jobs_submission.domain.job_types import TypeCatalog
from jobs_submission.domain.projects import as_id, project_for
from jobs_submission.domain.requests import (
    BatchJobSpec,
    JobRequest,
    check_job,
    dedupe,
    hash_json,
    normalize_owner,
    owner_for,
    with_owner,
)

MAX_BATCH_SIZE = 10_000
MAX_BATCH_PAYLOAD_BYTES = 12 * 1024 * 1024  # the members' payloads together, as JSON
MAX_CYCLE_LISTED = 20


class BatchCreate(CamelModel):
    """The body of ``POST /api/v1/batches``."""

    model_config = ConfigDict(extra="forbid")

    jobs: list[BatchJobSpec] = Field(
        min_length=1,
        max_length=MAX_BATCH_SIZE,
        description="Job specs, as POST /api/v1/jobs; their payloads together at most 12 MiB.",
    )
    name: str | None = Field(default=None, min_length=1, max_length=200)
    submitted_by: EmailStr | None = Field(
        default=None, description="Owner of every member; defaults to the caller."
    )
    project_id: uuid.UUID | None = Field(
        default=None,
        description="The project (its id) of the batch and every member; defaults to the one "
        "X-Project names, else your personal default project. You need the member role there.",
    )


class _BatchEnvelope(CamelModel):
    """The batch's own fields; the specs are validated one by one (for their error paths)."""

    model_config = ConfigDict(extra="forbid")

    jobs: list[Any] = Field(min_length=1, max_length=MAX_BATCH_SIZE)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    submitted_by: EmailStr | None = None
    project_id: uuid.UUID | None = None


@dataclass(frozen=True)
class BatchRequest:
    submitted_by: str
    name: str | None
    specs: tuple[JobRequest, ...]
    project_id: str

    @property
    def size(self) -> int:
        return len(self.specs)

    def request_hash(self) -> str:
        return hash_json(
            {
                "submittedBy": self.submitted_by,
                "name": self.name,
                "jobs": [spec.canonical() for spec in self.specs],
            }
        )

    def absolute_parents(self) -> list[tuple[str, str]]:
        """``(field, job_id)`` of every parent named by id (not by ref), for the owner check."""
        return [
            (f"jobs.{i}.dependsOn.{j}", parent)
            for i, spec in enumerate(self.specs)
            for j, parent in enumerate(spec.depends_on)
            if not parent.startswith(REF_PREFIX)
        ]

    def resolve(self, job_ids: Sequence[str]) -> list[list[str]]:
        """Each spec's parents as job ids: ``ref:<label>`` becomes that spec's generated id."""
        by_ref = {spec.ref: job_ids[i] for i, spec in enumerate(self.specs) if spec.ref}
        return [
            [
                by_ref[parent[len(REF_PREFIX) :]] if parent.startswith(REF_PREFIX) else parent
                for parent in spec.depends_on
            ]
            for spec in self.specs
        ]


def validate_batch(
    data: object, *, identity: Identity, now: datetime, catalog: TypeCatalog
) -> BatchRequest:
    """Validate a whole batch; every problem of every spec is reported at once.

    Raises :class:`ValidationFailed` (422), or ``Forbidden`` when a non-admin names another
    owner for the batch.
    """
    try:
        envelope = _BatchEnvelope.model_validate(data)
    except ValidationError as exc:
        details = field_details(exc.errors())
        raw_jobs = data.get("jobs") if isinstance(data, Mapping) else None
        if isinstance(raw_jobs, list) and len(raw_jobs) <= MAX_BATCH_SIZE:
            details.extend(_spec_errors(raw_jobs, now, catalog))
        raise ValidationFailed("batch validation failed", details=dedupe(details)) from None
    total = payload_bytes(envelope.jobs)
    if total > MAX_BATCH_PAYLOAD_BYTES:
        message = f"payloads total {total} bytes of JSON; at most {MAX_BATCH_PAYLOAD_BYTES}"
        raise ValidationFailed(
            "batch validation failed", details=[ErrorDetail(field="jobs", message=message)]
        )
    owner = owner_for(envelope.submitted_by, identity)
    project = project_for(as_id(envelope.project_id), owner, identity)
    details = []
    specs: list[JobRequest] = []
    for i, raw in enumerate(envelope.jobs):
        job, problems = check_job(
            raw, now=now, model=BatchJobSpec, prefix=f"jobs.{i}", catalog=catalog
        )
        details.extend(problems)
        if job is None:
            continue
        if job.requested_owner is not None and normalize_owner(job.requested_owner) != owner:
            details.append(
                ErrorDetail(
                    field=f"jobs.{i}.submittedBy", message="must equal the batch's submittedBy"
                )
            )
        specs.append(with_owner(job, owner, project, identity.api_key))
    details.extend(check_refs(envelope.jobs))
    if details:
        raise ValidationFailed("batch validation failed", details=dedupe(details))
    return BatchRequest(
        submitted_by=owner, name=envelope.name, specs=tuple(specs), project_id=project
    )


def payload_bytes(raw_jobs: Sequence[Any]) -> int:
    """The JSON size of every spec's payload together (what the batch stores and relays)."""
    return sum(json_size(raw.get("payload")) for raw in raw_jobs if isinstance(raw, Mapping))


def _spec_errors(raw_jobs: list[Any], now: datetime, catalog: TypeCatalog) -> list[ErrorDetail]:
    details: list[ErrorDetail] = []
    for i, raw in enumerate(raw_jobs):
        prefix = f"jobs.{i}"
        details.extend(
            check_job(raw, now=now, model=BatchJobSpec, prefix=prefix, catalog=catalog)[1]
        )
    return details


def _raw_refs(raw_jobs: Sequence[Any]) -> tuple[dict[str, int], list[ErrorDetail]]:
    refs: dict[str, int] = {}
    details = []
    for i, raw in enumerate(raw_jobs):
        ref = raw.get("ref") if isinstance(raw, Mapping) else None
        if not isinstance(ref, str):
            continue
        if ref in refs:
            details.append(ErrorDetail(field=f"jobs.{i}.ref", message="duplicate ref in batch"))
        else:
            refs[ref] = i
    return refs, details


def check_refs(raw_jobs: Sequence[Any]) -> list[ErrorDetail]:
    """Duplicate refs, unknown refs, self-dependencies and cycles among the specs.

    Works on the raw specs, so a spec that is invalid for another reason still provides its
    ref to the others (no follow-up "unknown ref" noise).
    """
    refs, details = _raw_refs(raw_jobs)
    edges: dict[int, list[int]] = {}  # child -> parents within the batch
    for i, raw in enumerate(raw_jobs):
        parents = raw.get("dependsOn") if isinstance(raw, Mapping) else None
        if not isinstance(parents, list):
            continue
        for parent in parents:
            if not (isinstance(parent, str) and parent.startswith(REF_PREFIX)):
                continue
            label = parent[len(REF_PREFIX) :]
            target = refs.get(label)
            if not is_ref_label(label):
                continue  # reported by the spec's own validation
            if target is None:
                details.append(
                    ErrorDetail(field=f"jobs.{i}.dependsOn", message=f"unknown ref {label!r}")
                )
            elif target == i:
                details.append(
                    ErrorDetail(
                        field=f"jobs.{i}.dependsOn", message="a job cannot depend on itself"
                    )
                )
            else:
                edges.setdefault(i, []).append(target)
    for cycle in find_cycles(len(raw_jobs), edges):
        listed = ", ".join(f"jobs.{n}" for n in cycle[:MAX_CYCLE_LISTED])
        more = f" and {len(cycle) - MAX_CYCLE_LISTED} more" if len(cycle) > MAX_CYCLE_LISTED else ""
        message = f"dependency cycle among {listed}{more}"
        details.extend(ErrorDetail(field=f"jobs.{n}.dependsOn", message=message) for n in cycle)
    return details


def find_cycles(size: int, parents: Mapping[int, Sequence[int]]) -> list[list[int]]:
    """The dependency cycles of a graph of ``size`` nodes (``child -> parents`` edges).

    A topological sort (Kahn) removes every node that is not blocked by a cycle; the strongly
    connected components of what remains (Tarjan, iterative) with more than one node are the
    cycles. Nodes that merely depend on a cycle are not reported. Each cycle is sorted.
    """
    children: dict[int, list[int]] = {}
    blocking = [0] * size  # unresolved parents per node
    for child, of in parents.items():
        blocking[child] = len(of)
        for parent in of:
            children.setdefault(parent, []).append(child)
    ready = [n for n in range(size) if blocking[n] == 0]
    while ready:
        node = ready.pop()
        for child in children.get(node, ()):
            blocking[child] -= 1
            if blocking[child] == 0:
                ready.append(child)
    remaining = {n for n in range(size) if blocking[n] > 0}
    if not remaining:
        return []
    return [sorted(c) for c in _components(remaining, parents) if len(c) > 1]


def _components(nodes: set[int], edges: Mapping[int, Sequence[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components over ``nodes``, without recursion."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    found: list[list[int]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = [s for s in edges.get(node, ()) if s in nodes]
            if position < len(successors):
                work.append((node, position + 1))
                nxt = successors[position]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found
