"""Chains and groups of tasks submitted as one batch whose jobs depend on each other
(Celery's ``chain``, ``group`` and ``chord``).

A :class:`Canvas` is a list of layers, each a group of signatures; every job of a layer
depends on every job of the layer before it (``dependsOn: ["ref:..."]`` inside the batch), so
the server runs a layer once the one before it succeeded, and fails it (``dependency_failed``)
when a job before it ended dead or cancelled. ``chain(a, b, c)`` is three layers of one;
``group([a, b]).then(d)`` (``chord([a, b], d)``) a layer of two, then one. Nothing here does
I/O: ``client.submit(canvas)`` sends :meth:`Canvas.specs` with ``POST /api/batches``.

Each job's ``ref`` is its signature's ``ref``, else ``step<n>``: its place in the batch, in
order, from 0 (``chain(a, b, c)``: ``step0``, ``step1``, ``step2``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from jobs_client.models import JobSpec
from jobs_client.tasks import Signature

R = TypeVar("R")
R2 = TypeVar("R2")

Layer = tuple[Signature[Any, Any], ...]


@dataclass(frozen=True)
class Canvas(Generic[R]):
    """Layers of signatures run one after the other. ``R`` is what its ``result()`` gives:
    the last step's result, or the list of the last group's results (in order)."""

    layers: tuple[Layer, ...]
    ends_in_group: bool

    def then(self, step: Signature[Any, R2] | Canvas[R2]) -> Canvas[R2]:
        """This canvas, then ``step`` once every job of its last layer succeeded."""
        return chain(self, step)

    def __or__(self, step: Signature[Any, R2] | Canvas[R2]) -> Canvas[R2]:
        return chain(self, step)

    @property
    def signatures(self) -> Layer:
        """Every step, layer after layer: the order of the batch's jobs."""
        return tuple(sig for layer in self.layers for sig in layer)

    @property
    def final(self) -> tuple[int, ...]:
        """The places in the batch of the last layer's jobs (whose results are the result)."""
        total = len(self.signatures)
        return tuple(range(total - len(self.layers[-1]), total))

    def readers(self) -> list[Callable[[Any], Any]]:
        return [sig.task.read for sig in self.signatures]

    def specs(self) -> list[JobSpec]:
        """The batch's job specs: each with its ref, each after the layer before it."""
        specs: list[JobSpec] = []
        previous: list[str] = []
        for layer in self.layers:
            refs: list[str] = []
            for sig in layer:
                ref = sig.spec.ref or f"step{len(specs)}"
                outside = list(sig.spec.depends_on or ())
                parents = outside + [f"ref:{parent}" for parent in previous]
                specs.append(dataclasses.replace(sig.spec, ref=ref, depends_on=parents or None))
                refs.append(ref)
            previous = refs
        return specs


Step = Signature[Any, Any] | Canvas[Any]


def _layers(step: Step) -> tuple[Layer, ...]:
    if isinstance(step, Signature):
        return ((step,),)
    if isinstance(step, Canvas):
        return step.layers
    raise TypeError(f"a step of a chain is a task's signature (task.s(...)) or a group: {step!r}")


@overload
def chain(a: Signature[Any, R] | Canvas[R], /) -> Canvas[R]: ...


@overload
def chain(a: Step, b: Signature[Any, R] | Canvas[R], /) -> Canvas[R]: ...


@overload
def chain(a: Step, b: Step, c: Signature[Any, R] | Canvas[R], /) -> Canvas[R]: ...


@overload
def chain(a: Step, b: Step, c: Step, d: Signature[Any, R] | Canvas[R], /) -> Canvas[R]: ...


@overload
def chain(a: Step, b: Step, c: Step, d: Step, e: Signature[Any, R] | Canvas[R], /) -> Canvas[R]: ...


@overload
def chain(*steps: Step) -> Canvas[Any]: ...


def chain(*steps: Step) -> Canvas[Any]:
    """The steps one after the other: each starts once the one before it succeeded. A step
    is a signature (``task.s(payload)``) or a group; the result is the last step's."""
    if not steps:
        raise ValueError("a chain needs at least one step")
    layers = tuple(layer for step in steps for layer in _layers(step))
    last = steps[-1]
    return Canvas(layers, ends_in_group=isinstance(last, Canvas) and last.ends_in_group)


def group(steps: Iterable[Signature[Any, Any]]) -> Canvas[list[Any]]:
    """Signatures that run side by side; ``.then(step)`` runs ``step`` after all of them
    succeeded. Its own result is the list of their results, in order."""
    members = tuple(steps)
    if not members:
        raise ValueError("a group needs at least one signature")
    for member in members:
        if not isinstance(member, Signature):
            raise TypeError(f"a group's members are signatures (task.s(...)): {member!r}")
    return Canvas((members,), ends_in_group=True)


def chord(header: Iterable[Signature[Any, Any]], body: Signature[Any, R]) -> Canvas[R]:
    """Celery's chord: ``group(header).then(body)``."""
    return group(header).then(body)
