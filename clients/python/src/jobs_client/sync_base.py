"""The blocking client's plumbing: it performs the steps of
:func:`jobs_client.exchange.exchange` with an ``httpx.Client`` (send, ``time.sleep``, renew
the session under a lock), and walks paged listings. :mod:`jobs_client.async_base` is its
mirror; :class:`jobs_client.JobsClient` is built on it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from jobs_client import calls
from jobs_client.auth import TokenStore
from jobs_client.core import ClientCore, request_options
from jobs_client.errors import AuthError, TransportFailure
from jobs_client.exchange import Call, Renew, Send, Sleep, exchange
from jobs_client.models import Job, Page, Tokens
from jobs_client.retries import Retries

T = TypeVar("T")


class SyncBase:
    """Connection, credentials and the request loop of :class:`jobs_client.JobsClient`."""

    def __init__(
        self,
        url: str | None = None,
        *,
        email: str | None = None,
        password: str | None = None,
        token: str | None = None,
        tokens: Tokens | None = None,
        token_store: TokenStore | None = None,
        api_key: str | None = None,
        project: str | None = None,
        timeout: float = 30.0,
        retries: Retries | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._core = ClientCore.build(
            url,
            email=email,
            password=password,
            token=token,
            tokens=tokens,
            token_store=token_store,
            api_key=api_key,
            project=project,
            retries=retries,
            timeout=timeout,
        )
        self._http = httpx.Client(transport=transport, **self._core.http_options())
        self._renewing = threading.Lock()

    @property
    def url(self) -> str:
        return self._core.url

    @property
    def tokens(self) -> Tokens | None:
        """The session's current tokens (after a login or a refresh: the newest pair)."""
        return self._core.credentials.tokens

    @property
    def project(self) -> str | None:
        """The project every call names (``X-Project``), if one: ``project=``, else
        ``JOBS_PROJECT``."""
        return self._core.project

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _send(self, call: Call[Any]) -> httpx.Response:
        steps = exchange(
            call,
            credentials=self._core.credentials,
            retries=self._core.retries,
            rng=self._core.rng,
        )
        outcome: httpx.Response | httpx.TransportError | None = None
        try:
            while True:
                step = steps.send(outcome)
                outcome = None
                if isinstance(step, Send):
                    try:
                        outcome = self._http.request(
                            step.method, step.path, **request_options(step)
                        )
                    except httpx.TransportError as exc:
                        outcome = exc
                elif isinstance(step, Sleep):
                    time.sleep(step.seconds)
                elif isinstance(step, Renew):
                    self._renew(step.stale)
        except StopIteration as finished:
            response: httpx.Response = finished.value
            return response
        finally:
            steps.close()

    def _run(self, call: Call[T]) -> T:
        return call.parse(self._send(call))

    def _walk(self, page_call: Callable[[int], Call[Page[T]]]) -> Iterator[Page[T]]:
        """Pages 1, 2, ... of a listing, each fetched when the previous one was consumed."""
        for number in itertools.count(1):
            page = self._run(page_call(number))
            yield page
            if page.last or not page.items:
                return

    def _items(self, page_call: Callable[[int], Call[Page[T]]]) -> Iterator[T]:
        for page in self._walk(page_call):
            yield from page.items

    def _renew(self, stale: str | None) -> None:
        credentials = self._core.credentials
        with self._renewing:
            if credentials.access_token != stale or credentials.adopt_stored():
                return  # renewed meanwhile, here or by another process sharing the store
            # A refresh refused, or unanswered (its token may be spent): log in when we can.
            refused: AuthError | TransportFailure | None = None
            for call in credentials.renewal_calls():
                try:
                    credentials.accept(self._run(call))
                    return
                except (AuthError, TransportFailure) as exc:
                    refused = exc
            raise refused or AuthError(
                "the session cannot be renewed: log in again", code="not_logged_in"
            )

    def login(self, email: str | None = None, password: str | None = None) -> Tokens:
        """Log in (``POST /auth/login``) with these or the constructor's email and password;
        the session is kept (and saved to the token store) and renewed from then on."""
        credentials = self._core.credentials
        if email is not None and password is not None:
            credentials.use_password(email, password)
        tokens = self._run(credentials.login_call())
        credentials.accept(tokens)
        return tokens

    def logout(self) -> None:
        """Revoke the session (``POST /auth/logout``) and forget its tokens."""
        call = self._core.credentials.logout_call()
        if call is not None:
            self._run(call)
        self._core.credentials.forget()

    def _get(self, job_id: str) -> Job:
        return self._run(calls.get_job(job_id))

    def _fresh_token(self) -> str:
        credentials = self._core.credentials
        if credentials.must_renew():
            self._renew(credentials.access_token)
        if credentials.access_token is None:
            raise AuthError("not logged in", code="not_logged_in")
        return credentials.access_token
