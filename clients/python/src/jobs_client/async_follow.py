"""Waiting for jobs and following live events and log lines with asyncio, the mirror of
:mod:`jobs_client.sync_follow` (websockets' asyncio client, ``asyncio.timeout``).
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import AsyncIterator, Callable
from typing import overload

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from jobs_client import calls
from jobs_client.async_base import AsyncBase
from jobs_client.errors import JobsError, NotFound, WaitTimeout
from jobs_client.models import Job, JobChange, LogLine
from jobs_client.waiting import (
    CLOSE_TOKEN_REFUSED,
    FOLLOW_GRACE_SECONDS,
    MAX_SOCKET_FAILURES,
    SAFETY_POLL_SECONDS,
    SOCKET_ERRORS,
    JobRef,
    JobRefs,
    PollPause,
    WaitProgress,
    WaitState,
    bounded,
    events_url,
    parse_frame,
    wanted_ids,
)

JobList = builtins.list[Job]


class AsyncFollowing(AsyncBase):
    """``wait``, ``events`` and ``logs`` of :class:`jobs_client.AsyncJobsClient`."""

    @overload
    async def wait(  # type: ignore[overload-overlap]  # a str is a Sequence[str]: one id
        self,
        job_ids: JobRef,
        *,
        timeout: float | None = ...,
        live: bool = ...,
        on_progress: Callable[[WaitProgress], None] | None = ...,
    ) -> Job: ...

    @overload
    async def wait(
        self,
        job_ids: JobRefs,
        *,
        timeout: float | None = ...,
        live: bool = ...,
        on_progress: Callable[[WaitProgress], None] | None = ...,
    ) -> JobList: ...

    async def wait(
        self,
        job_ids: JobRef | JobRefs,
        *,
        timeout: float | None = None,
        live: bool = True,
        on_progress: Callable[[WaitProgress], None] | None = None,
    ) -> Job | JobList:
        ids, single = wanted_ids(job_ids)
        state = WaitState(ids, on_progress)
        deadline = None if timeout is None else time.monotonic() + timeout
        await self._follow(state, deadline, timeout, live)
        jobs = [state.finished[i] for i in state.ids]
        return jobs[0] if single else jobs

    def _remaining(self, deadline: float | None) -> float | None:
        return None if deadline is None else deadline - time.monotonic()

    async def _follow(
        self, state: WaitState, deadline: float | None, timeout: float | None, live: bool
    ) -> None:
        socket: ClientConnection | None = None
        failures = 0 if live else MAX_SOCKET_FAILURES
        pause = PollPause()
        try:
            while True:
                if socket is None and failures < MAX_SOCKET_FAILURES:
                    socket = await self._open_socket()
                    failures = 0 if socket is not None else failures + 1
                await self._poll(state)
                if state.done():
                    return
                remaining = self._remaining(deadline)
                if remaining is not None and remaining <= 0:
                    raise WaitTimeout(
                        state.timeout_message(timeout), pending=state.pending_statuses()
                    )
                if socket is None:
                    await asyncio.sleep(bounded(pause.next(), remaining))
                    continue
                socket = await self._listen(socket, state, deadline)
                if socket is None:
                    failures += 1
        finally:
            if socket is not None:
                await socket.close()

    async def _listen(
        self, socket: ClientConnection, state: WaitState, deadline: float | None
    ) -> ClientConnection | None:
        while not state.done():
            remaining = self._remaining(deadline)
            if remaining is not None and remaining <= 0:
                return socket
            window = bounded(SAFETY_POLL_SECONDS, remaining)
            try:
                async with asyncio.timeout(window):
                    frame = parse_frame(await socket.recv())
            except TimeoutError:
                return socket
            except ConnectionClosed:
                return None
            for job_id in state.terminal_changes(frame.changes):
                state.observe(await self._get(job_id))
        return socket

    async def _open_socket(self) -> ClientConnection | None:
        for _ in range(2):
            token = await self._fresh_token()
            try:
                socket = await connect(events_url(self.url, token), open_timeout=10)
            except SOCKET_ERRORS:
                return None
            try:
                async with asyncio.timeout(10):
                    hello = parse_frame(await socket.recv())
                if hello.type == "hello":
                    return socket
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == CLOSE_TOKEN_REFUSED:
                    await self._renew(token)
                    continue
            except (TimeoutError, ValueError):
                pass
            await socket.close()
            return None
        return None

    async def _poll(self, state: WaitState) -> None:
        for job_id in state.pending():
            try:
                state.observe(await self._get(job_id))
            except NotFound:
                if job_id in state.accepted:
                    continue
                await self._run(calls.submission_status(job_id))
                state.accepted.add(job_id)

    async def events(self) -> AsyncIterator[JobChange]:
        failures = 0
        while True:
            socket = await self._open_socket()
            if socket is None:
                failures += 1
                if failures >= MAX_SOCKET_FAILURES:
                    raise JobsError(f"the live events socket of {self.url} cannot be opened")
                await asyncio.sleep(0.5 * failures)
                continue
            failures = 0
            try:
                while True:
                    for change in parse_frame(await socket.recv()).changes:
                        yield change
            except ConnectionClosed:
                continue
            finally:
                await socket.close()

    async def logs(
        self, job_id: str, *, follow: bool = False, poll_interval: float = 0.5
    ) -> AsyncIterator[LogLine]:
        after = 0
        finished_at: float | None = None
        while True:
            try:
                lines, after = await self._run(
                    calls.job_logs(job_id, after_id=after, limit=calls.MAX_LOG_LIMIT)
                )
            except NotFound:
                if not follow:
                    raise
                await self._run(calls.submission_status(job_id))
                lines = []
            for line in lines:
                yield line
            if len(lines) == calls.MAX_LOG_LIMIT:
                continue
            if not follow:
                return
            if finished_at is not None:
                if time.monotonic() - finished_at >= FOLLOW_GRACE_SECONDS:
                    return
            elif await self._finished(job_id):
                finished_at = time.monotonic()
            await asyncio.sleep(poll_interval)

    async def _finished(self, job_id: str) -> bool:
        try:
            return (await self._get(job_id)).finished
        except NotFound:
            return False
