"""Waiting for jobs and following live events and log lines, blocking. What to decide is
:mod:`jobs_client.waiting`'s (shared with the async client); here are the socket
(websockets' sync client), the polls and the sleeps.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterator
from typing import overload

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from jobs_client import calls
from jobs_client.errors import JobsError, NotFound, WaitTimeout
from jobs_client.models import Job, JobChange, LogLine
from jobs_client.sync_base import SyncBase
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


class SyncFollowing(SyncBase):
    """``wait``, ``events`` and ``logs`` of :class:`jobs_client.JobsClient`."""

    @overload
    def wait(  # type: ignore[overload-overlap]  # a str is a Sequence[str]: one id
        self,
        job_ids: JobRef,
        *,
        timeout: float | None = ...,
        live: bool = ...,
        on_progress: Callable[[WaitProgress], None] | None = ...,
    ) -> Job: ...

    @overload
    def wait(
        self,
        job_ids: JobRefs,
        *,
        timeout: float | None = ...,
        live: bool = ...,
        on_progress: Callable[[WaitProgress], None] | None = ...,
    ) -> JobList: ...

    def wait(
        self,
        job_ids: JobRef | JobRefs,
        *,
        timeout: float | None = None,
        live: bool = True,
        on_progress: Callable[[WaitProgress], None] | None = None,
    ) -> Job | JobList:
        """Wait until the job (its id, or what ``submit`` returned; or every job of a list,
        or of what ``submit_batch`` returned) is succeeded, dead or cancelled, and return it
        (them, in the order given) as :meth:`get` reads it. Raises
        :class:`WaitTimeout` after ``timeout`` seconds (None: no limit). Follows the live
        events socket (``live``), falling back to polling; see :mod:`jobs_client.waiting`."""
        ids, single = wanted_ids(job_ids)
        state = WaitState(ids, on_progress)
        deadline = None if timeout is None else time.monotonic() + timeout
        self._follow(state, deadline, timeout, live)
        jobs = [state.finished[i] for i in state.ids]
        return jobs[0] if single else jobs

    def _remaining(self, deadline: float | None) -> float | None:
        return None if deadline is None else deadline - time.monotonic()

    def _follow(
        self, state: WaitState, deadline: float | None, timeout: float | None, live: bool
    ) -> None:
        socket: ClientConnection | None = None
        failures = 0 if live else MAX_SOCKET_FAILURES
        pause = PollPause()
        try:
            while True:
                if socket is None and failures < MAX_SOCKET_FAILURES:
                    socket = self._open_socket()
                    failures = 0 if socket is not None else failures + 1
                self._poll(state)  # catch up: events before the socket was bound are gone
                if state.done():
                    return
                remaining = self._remaining(deadline)
                if remaining is not None and remaining <= 0:
                    raise WaitTimeout(
                        state.timeout_message(timeout), pending=state.pending_statuses()
                    )
                if socket is None:
                    time.sleep(bounded(pause.next(), remaining))
                    continue
                socket = self._listen(socket, state, deadline)
                if socket is None:
                    failures += 1
        finally:
            if socket is not None:
                socket.close()

    def _listen(
        self, socket: ClientConnection, state: WaitState, deadline: float | None
    ) -> ClientConnection | None:
        """Apply frames until a quiet SAFETY_POLL_SECONDS, the deadline, or every job done;
        None when the socket closed."""
        while not state.done():
            remaining = self._remaining(deadline)
            if remaining is not None and remaining <= 0:
                return socket
            window = bounded(SAFETY_POLL_SECONDS, remaining)
            try:
                frame = parse_frame(socket.recv(timeout=window))
            except TimeoutError:
                return socket
            except ConnectionClosed:
                return None
            for job_id in state.terminal_changes(frame.changes):
                state.observe(self._get(job_id))
        return socket

    def _open_socket(self) -> ClientConnection | None:
        """The live events socket after its ``hello``, or None (the wait polls instead)."""
        for _ in range(2):  # a refused token: renew once and connect again
            token = self._fresh_token()
            try:
                # legacy=True: the connection itself, closed by us (websockets' documented
                # opt-in; without it 17.x warns, and a later release returns a reconnector)
                socket = connect(events_url(self.url, token), open_timeout=10, legacy=True)
            except SOCKET_ERRORS:
                return None
            try:
                hello = parse_frame(socket.recv(timeout=10))
                if hello.type == "hello":
                    return socket
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code == CLOSE_TOKEN_REFUSED:
                    self._renew(token)
                    continue
            except (TimeoutError, ValueError):
                pass
            socket.close()
            return None
        return None

    def _poll(self, state: WaitState) -> None:
        for job_id in state.pending():
            try:
                state.observe(self._get(job_id))
            except NotFound:
                if job_id in state.accepted:
                    continue  # accepted, not recorded by the scheduler yet
                self._run(calls.submission_status(job_id))  # NotFound when it does not exist
                state.accepted.add(job_id)

    def events(self) -> Iterator[JobChange]:
        """Status changes of your jobs (an admin's: all) as they happen, from the live
        events socket, reconnecting when it closes. Best effort: a change may be missed."""
        failures = 0
        while True:
            socket = self._open_socket()
            if socket is None:
                failures += 1
                if failures >= MAX_SOCKET_FAILURES:
                    raise JobsError(f"the live events socket of {self.url} cannot be opened")
                time.sleep(0.5 * failures)
                continue
            failures = 0
            try:
                while True:
                    yield from parse_frame(socket.recv()).changes
            except ConnectionClosed:
                continue
            finally:
                socket.close()

    def logs(
        self, job_id: str, *, follow: bool = False, poll_interval: float = 0.5
    ) -> Iterator[LogLine]:
        """A job's log lines in order (``GET /api/jobs/{id}/logs``). With ``follow``, goes on
        reading new lines until the job finished and its last lines are read."""
        after = 0
        finished_at: float | None = None
        while True:
            try:
                lines, after = self._run(
                    calls.job_logs(job_id, after_id=after, limit=calls.MAX_LOG_LIMIT)
                )
            except NotFound:
                if not follow:
                    raise
                self._run(calls.submission_status(job_id))  # accepted, not recorded yet?
                lines = []
            yield from lines
            if len(lines) == calls.MAX_LOG_LIMIT:
                continue
            if not follow:
                return
            if finished_at is not None:
                if time.monotonic() - finished_at >= FOLLOW_GRACE_SECONDS:
                    return
            elif self._finished(job_id):
                finished_at = time.monotonic()
            time.sleep(poll_interval)

    def _finished(self, job_id: str) -> bool:
        try:
            return self._get(job_id).finished
        except NotFound:
            return False
