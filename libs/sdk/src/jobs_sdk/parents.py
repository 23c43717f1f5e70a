"""A DAG child's view of its parents' results (docs/sdk.md, "Parent results").

A child runs only once every parent succeeded, so each parent has its result (None when its
handler returned none). The dispatch carries them, at most 256 KiB of results together: a
result past that bound is named with its size but not carried, and reading it raises
:class:`ParentResultTooLarge` (a permanent failure if left uncaught; large outputs belong in
an artifact whose address the parent returns).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jobs_sdk.errors import FailPermanently


class ParentResultTooLarge(FailPermanently):
    """The parent's result was too large for the dispatch to carry."""


@dataclass(frozen=True)
class Parent:
    """One parent of the running job: its id, its ref in the child's batch (if it had one),
    its result, or ``omitted`` (with its ``size`` in bytes) when too large to carry."""

    job_id: uuid.UUID
    ref: str | None = None
    result: dict[str, Any] | None = None
    omitted: bool = False
    size: int | None = None

    def value(self) -> dict[str, Any] | None:
        if self.omitted:
            raise ParentResultTooLarge(
                f"the result of parent {self.ref or self.job_id} is {self.size} bytes, more "
                "than a dispatch carries; have the parent store it elsewhere and return where"
            )
        return self.result


class _ByRef(Mapping[str, dict[str, Any] | None]):
    def __init__(self, parents: Mapping[str, Parent]) -> None:
        self._parents = parents

    def __getitem__(self, ref: str) -> dict[str, Any] | None:
        return self._parents[ref].value()

    def __iter__(self) -> Iterator[str]:
        return iter(self._parents)

    def __len__(self) -> int:
        return len(self._parents)


class ParentResults(Mapping[uuid.UUID, dict[str, Any] | None]):
    """The parents' results by parent job id; :attr:`by_ref` by batch ref. Reading an
    omitted result raises :class:`ParentResultTooLarge` (``.get`` too: it is there)."""

    def __init__(self, parents: Iterable[Parent] = ()) -> None:
        self.parents: tuple[Parent, ...] = tuple(parents)
        self._by_id = {p.job_id: p for p in self.parents}
        self.by_ref: Mapping[str, dict[str, Any] | None] = _ByRef(
            {p.ref: p for p in self.parents if p.ref is not None}
        )

    def __getitem__(self, job_id: uuid.UUID) -> dict[str, Any] | None:
        return self._by_id[job_id].value()

    def __iter__(self) -> Iterator[uuid.UUID]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def __hash__(self) -> int:  # equal mappings have the same parents
        return hash(frozenset(self._by_id))

    def find(self, key: str | uuid.UUID) -> Parent:
        """The parent named by ``key``: a ref of the child's batch, or a job id (a UUID or
        its text). KeyError naming the parents there are when none is."""
        job_id: uuid.UUID | None = key if isinstance(key, uuid.UUID) else None
        if isinstance(key, str):
            for parent in self.parents:
                if parent.ref == key:
                    return parent
            try:
                job_id = uuid.UUID(key)
            except ValueError:
                job_id = None
        found = self._by_id.get(job_id) if job_id is not None else None
        if found is None:
            named = [p.ref or str(p.job_id) for p in self.parents] or ["none"]
            raise KeyError(f"no parent {key!s}; this job's parents: {', '.join(named)}")
        return found


NO_PARENTS = ParentResults()
