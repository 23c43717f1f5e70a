"""One call's life, shared by the sync and the async client without doing any I/O itself.

A :class:`Call` says what to send and how to read the answer. :func:`exchange` is a generator
that walks the call through authentication, renewals and retries: it yields the steps to
perform (:class:`Send` a request, :class:`Sleep`, :class:`Renew` the session), is sent what
each step gave (the response, or the transport error), and returns the final response or
raises the typed error. Each client drives it with its own HTTP client and its own sleep, in
a dozen lines (``JobsClient._send``, ``AsyncJobsClient._send``); the rules live here once and
are unit-tested by feeding outcomes by hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import httpx

from jobs_client.errors import AuthError, TransportFailure, error_from_response
from jobs_client.retries import Retries, sent

if TYPE_CHECKING:
    from jobs_client.auth import Credentials

T = TypeVar("T")

NO_BODY: Any = object()


@dataclass(frozen=True)
class Call(Generic[T]):
    """A request of the API and the reading of its answer.

    ``replay_safe``: sending it twice does what sending it once does (reads, submissions
    with their Idempotency-Key, pause/resume); see :mod:`jobs_client.retries`."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: tuple[tuple[str, str], ...] = ()
    body: Any = NO_BODY
    headers: Mapping[str, str] = field(default_factory=dict)
    replay_safe: bool = False
    authenticated: bool = True


@dataclass(frozen=True)
class Send:
    method: str
    path: str
    params: tuple[tuple[str, str], ...]
    body: Any
    headers: dict[str, str]

    @property
    def has_body(self) -> bool:
        return self.body is not NO_BODY


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Renew:
    """Renew the session: refresh (or log in) unless the access token is no longer ``stale``
    (another call renewed it meanwhile)."""

    stale: str | None


Step = Send | Sleep | Renew
Outcome = httpx.Response | httpx.TransportError | None


def exchange(
    call: Call[Any], *, credentials: Credentials, retries: Retries, rng: random.Random
) -> Generator[Step, Outcome, httpx.Response]:
    """The steps of ``call`` until a success answer (returned) or an error (raised)."""
    attempt = 0
    renewed = False
    while True:
        headers = dict(call.headers)
        token: str | None = None
        if call.authenticated:
            if credentials.must_renew():
                yield Renew(credentials.access_token)
            token = credentials.access_token
            if token is None:
                raise AuthError(
                    "not logged in: run `jobs login`, set JOBS_TOKEN, or give the client "
                    "an email and password",
                    code="not_logged_in",
                )
            headers["Authorization"] = f"Bearer {token}"
        attempt += 1
        outcome = yield Send(call.method, call.path, call.params, call.body, headers)
        if isinstance(outcome, httpx.TransportError):
            delay = retries.after_failure(
                outcome, attempt=attempt, replay_safe=call.replay_safe, rng=rng
            )
            if delay is None:
                raise TransportFailure(
                    f"{call.method} {call.path}: {type(outcome).__name__}: {outcome or 'no answer'}"
                    f" (after {attempt} attempt{'s' if attempt > 1 else ''})",
                    maybe_processed=sent(outcome),
                ) from outcome
            yield Sleep(delay)
            continue
        if not isinstance(outcome, httpx.Response):
            raise TypeError(f"a Send step must be answered with a response, not {outcome!r}")
        if outcome.is_success:
            return outcome
        if outcome.status_code == 401 and token is not None and not renewed:
            if credentials.can_renew():
                renewed = True
                attempt -= 1  # a renewal is not a transient failure: the budget stays
                yield Renew(token)
                continue
        delay = retries.after_answer(
            outcome.status_code,
            outcome.headers,
            attempt=attempt,
            replay_safe=call.replay_safe,
            rng=rng,
        )
        if delay is None:
            raise error_from_response(outcome)
        yield Sleep(delay)


def json_body(response: httpx.Response) -> Any:
    return response.json()


def no_content(response: httpx.Response) -> None:
    return None
