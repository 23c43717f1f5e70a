"""The asyncio client's plumbing, the mirror of :mod:`jobs_client.sync_base`: the steps of
:func:`jobs_client.exchange.exchange` performed with an ``httpx.AsyncClient``,
``asyncio.sleep`` and an ``asyncio.Lock`` around renewals; paged listings as async iterators.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
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


class AsyncBase:
    """Connection, credentials and the request loop of :class:`jobs_client.AsyncJobsClient`."""

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
        transport: httpx.AsyncBaseTransport | None = None,
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
        self._http = httpx.AsyncClient(transport=transport, **self._core.http_options())
        self._renewing = asyncio.Lock()

    @property
    def url(self) -> str:
        return self._core.url

    @property
    def tokens(self) -> Tokens | None:
        return self._core.credentials.tokens

    @property
    def project(self) -> str | None:
        """The project every call names (``X-Project``), if one: ``project=``, else
        ``JOBS_PROJECT``."""
        return self._core.project

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _send(self, call: Call[Any]) -> httpx.Response:
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
                        outcome = await self._http.request(
                            step.method, step.path, **request_options(step)
                        )
                    except httpx.TransportError as exc:
                        outcome = exc
                elif isinstance(step, Sleep):
                    await asyncio.sleep(step.seconds)
                elif isinstance(step, Renew):
                    await self._renew(step.stale)
        except StopIteration as finished:
            response: httpx.Response = finished.value
            return response
        finally:
            steps.close()

    async def _run(self, call: Call[T]) -> T:
        return call.parse(await self._send(call))

    async def _walk(self, page_call: Callable[[int], Call[Page[T]]]) -> AsyncIterator[Page[T]]:
        for number in itertools.count(1):
            page = await self._run(page_call(number))
            yield page
            if page.last or not page.items:
                return

    async def _items(self, page_call: Callable[[int], Call[Page[T]]]) -> AsyncIterator[T]:
        async for page in self._walk(page_call):
            for item in page.items:
                yield item

    async def _renew(self, stale: str | None) -> None:
        credentials = self._core.credentials
        async with self._renewing:
            if credentials.access_token != stale or credentials.adopt_stored():
                return
            # A refresh refused, or unanswered (its token may be spent): log in when we can.
            refused: AuthError | TransportFailure | None = None
            for call in credentials.renewal_calls():
                try:
                    credentials.accept(await self._run(call))
                    return
                except (AuthError, TransportFailure) as exc:
                    refused = exc
            raise refused or AuthError(
                "the session cannot be renewed: log in again", code="not_logged_in"
            )

    async def login(self, email: str | None = None, password: str | None = None) -> Tokens:
        credentials = self._core.credentials
        if email is not None and password is not None:
            credentials.use_password(email, password)
        tokens = await self._run(credentials.login_call())
        credentials.accept(tokens)
        return tokens

    async def logout(self) -> None:
        call = self._core.credentials.logout_call()
        if call is not None:
            await self._run(call)
        self._core.credentials.forget()

    async def _get(self, job_id: str) -> Job:
        return await self._run(calls.get_job(job_id))

    async def _fresh_token(self) -> str:
        credentials = self._core.credentials
        if credentials.must_renew():
            await self._renew(credentials.access_token)
        if credentials.access_token is None:
            raise AuthError("not logged in", code="not_logged_in")
        return credentials.access_token
