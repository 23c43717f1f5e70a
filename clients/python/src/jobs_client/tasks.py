"""Typed tasks: a job type with its payload and result models, the way a Celery user names a
task. ``reverse = task("acme.reverse", Reverse, Reversed)`` is a ``Task[Reverse, Reversed]``;
``client.submit(reverse, Reverse(text="x"))`` checks the payload's type statically and its
handle's ``result()`` is a ``Reversed``. ``reverse.s(payload, **options)`` is a
:class:`Signature`, one step of a chain or a group (:mod:`jobs_client.canvas`).

:func:`settle` turns a finished job into its result or the exception that says why there is
none; both clients' handles use it. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, overload

from jobs_client.errors import JobCancelled, JobFailed, ResultInvalid
from jobs_client.models import Delay, Job, JobSpec, Payload, RetryPolicy

if TYPE_CHECKING:
    from jobs_client.canvas import Canvas

P = TypeVar("P", bound=Payload)
R = TypeVar("R")
R2 = TypeVar("R2")
M = TypeVar("M", bound="ResultModel")


class ResultModel(Protocol):
    """A pydantic model class (anything with ``model_validate``) a result is parsed into."""

    @classmethod
    def model_validate(cls, obj: Any) -> Self: ...


def as_is(value: Any) -> Any:
    """The reader of a task without a result model: the result as the API answers it."""
    return value


@dataclass(frozen=True, eq=False)
class Task(Generic[P, R]):
    """A job type with its payload type ``P`` and result type ``R``. Made by :func:`task`;
    ``read`` parses a succeeded job's ``result`` into an ``R``."""

    name: str
    payload_model: type[Any] | None
    result_model: type[Any] | None
    read: Callable[[Any], R]

    def s(
        self,
        payload: P,
        *,
        priority: int | None = None,
        run_at: datetime | str | None = None,
        delay: Delay | None = None,
        max_attempts: int | None = None,
        timeout_seconds: int | None = None,
        retry_policy: RetryPolicy | Mapping[str, Any] | str | None = None,
        depends_on: Sequence[str] | None = None,
        queue: str | None = None,
        ref: str | None = None,
    ) -> Signature[P, R]:
        """This task with its payload and options (those of ``submit``): one step of
        ``chain``, ``group`` or ``submit_batch``. ``ref`` names it in its batch (default:
        ``step<n>``, its place in the batch from 0); ``depends_on``: job ids outside it."""
        spec = JobSpec(
            type=self.name,
            payload=payload,
            priority=priority,
            run_at=run_at,
            delay=delay,
            max_attempts=max_attempts,
            timeout_seconds=timeout_seconds,
            retry_policy=retry_policy,
            depends_on=depends_on,
            queue=queue,
            ref=ref,
        )
        return Signature(self, spec)

    def __repr__(self) -> str:
        return f"task({self.name!r})"


@dataclass(frozen=True)
class Signature(Generic[P, R]):
    """A task with its payload and options, not submitted yet (Celery's ``task.s(...)``).
    ``a.s(x) | b.s(y)`` is ``chain(a.s(x), b.s(y))``."""

    task: Task[P, R]
    spec: JobSpec

    def __or__(self, then: Signature[Any, R2] | Canvas[R2]) -> Canvas[R2]:
        from jobs_client.canvas import chain

        return chain(self, then)


@overload
def task(name: str) -> Task[Mapping[str, Any], Any]: ...


@overload
def task(name: str, payload: type[P]) -> Task[P, Any]: ...


@overload
def task(name: str, payload: type[P], result: type[M]) -> Task[P, M]: ...


def task(
    name: str, payload: type[Any] | None = None, result: type[ResultModel] | None = None
) -> Task[Any, Any]:
    """A typed handle on the job type ``name``: ``payload`` the model a submission takes
    (sent as its JSON by alias; None: a mapping), ``result`` the pydantic model its result is
    read into (None: the result as the API answers it, a dict)."""
    if not name:
        raise ValueError("a task names its job type")
    read: Callable[[Any], Any] = as_is if result is None else result.model_validate
    return Task(name, payload, result, read)


@overload
def task_of(  # an async handler: R is what it returns, awaited
    handler: Callable[[Any, P], Awaitable[R]],
) -> Task[P, R]: ...


@overload
def task_of(handler: Callable[[Any, P], R]) -> Task[P, R]: ...


def task_of(handler: Callable[..., Any]) -> Task[Any, Any]:
    """The task of a ``@handler`` function (``jobs_sdk``), its types read from the handler's
    own signature: ``task_of(invoice)`` for ``async def invoice(ctx, payload: Invoice) ->
    Invoiced`` is a ``Task[Invoice, Invoiced]``, so a team's handler module is the one
    declaration. A result is read into the handler's ``result=`` model when it has one.
    Needs the handler SDK where it is called (``pip install jobs-sdk``)."""
    from jobs_sdk import spec_of  # only here: the client itself does not need the SDK

    spec = spec_of(handler)
    if spec is None:
        raise TypeError(f"{handler!r} is not a @handler function (jobs_sdk.handler)")
    model = spec.result_model
    read: Callable[[Any], Any] = as_is if model is None else model.model_validate
    return Task(spec.job_type, spec.payload_model, model, read)


def settle(job: Job, read: Callable[[Any], R]) -> R:
    """A finished job's result read by ``read``; :class:`JobFailed` for a dead job,
    :class:`JobCancelled` for a cancelled one, :class:`ResultInvalid` when ``read`` refuses
    the result."""
    if job.status == "succeeded":
        try:
            return read(job.result)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ResultInvalid(
                f"job {job.id} ({job.type}) succeeded with a result its task cannot read: {exc}",
                job_id=job.id,
                result=job.result,
            ) from exc
    if job.status == "cancelled":
        reason = _last_reason(job, "cancelled")
        raise JobCancelled(
            f"job {job.id} ({job.type}) was cancelled" + (f": {reason}" if reason else ""),
            job_id=job.id,
            reason=reason,
            cancelled_by=_text(job.raw.get("cancelRequestedBy")),
            job=job,
        )
    dead_letter = job.raw.get("deadLetter")
    reason = _text(dead_letter.get("reason")) if isinstance(dead_letter, Mapping) else None
    error_kind = _text(job.raw.get("lastErrorClass"))
    if error_kind is None and job.attempts:
        error_kind = job.attempts[-1].error_class
    raise JobFailed(
        f"job {job.id} ({job.type}) is {job.status} after {job.attempt} attempt(s)"
        + (f" ({reason})" if reason else "")
        + (f": {job.last_error}" if job.last_error else ""),
        job_id=job.id,
        error=job.last_error,
        error_kind=error_kind,
        attempts=job.attempt,
        reason=reason or _last_reason(job, job.status),
        job=job,
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _last_reason(job: Job, status: str) -> str | None:
    for entry in reversed(job.timeline):
        if entry.get("toStatus") == status:
            return _text(entry.get("reason"))
    return None
