"""Rate limits as fixed windows: the window arithmetic, Retry-After, and the per-replica
counting of the ``/api`` limit (pure: the counts are stored by adapters/rate_limits.py).

A limit allows ``max_hits`` per key in each window of ``seconds``, windows aligned on the
epoch (a minute window starts at :00). A fixed window lets a client use up to twice the
limit across one boundary; for login and registration limits that is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    """What a counter counts (``gateway.rate_limit_counters.scope``)."""

    LOGIN_ACCOUNT = "login_account"  # key: the normalized email, whether it exists or not
    LOGIN_ADDRESS = "login_address"  # key: the client address
    REGISTER_ADDRESS = "register_address"  # key: the client address
    API_USER = "api_user"  # key: the user id


@dataclass(frozen=True)
class Window:
    seconds: int

    def __post_init__(self) -> None:
        if self.seconds <= 0:
            raise ValueError("a window lasts at least one second")

    def start(self, now: float) -> int:
        """The start (epoch seconds) of the window ``now`` falls in."""
        return math.floor(now / self.seconds) * self.seconds

    def end(self, now: float) -> int:
        return self.start(now) + self.seconds

    def retry_after(self, now: float) -> int:
        """Whole seconds until the window ends (at least 1): the ``Retry-After`` value."""
        return max(1, math.ceil(self.end(now) - now))


@dataclass(frozen=True)
class Limit:
    scope: Scope
    max_hits: int
    window: Window

    def exceeded(self, hits: int) -> bool:
        """``hits`` counts the current attempt too: the ``max_hits``-th is still allowed."""
        return hits > self.max_hits


def retry_after(counted: Iterable[tuple[Limit, int]], *, now: float) -> int | None:
    """None when no limit is exceeded by its count, else the longest wait among those that
    are (the client may come back when every exceeded limit allows it again)."""
    waits = [limit.window.retry_after(now) for limit, hits in counted if limit.exceeded(hits)]
    return max(waits) if waits else None


@dataclass(frozen=True)
class Deltas:
    """Hits counted by this replica and not yet added to the shared counts."""

    window_start: int
    window_end: int
    hits: Mapping[str, int]


class ReplicaWindowCounts:
    """One replica's view of a limit shared by all replicas, counted per key per window.

    Each hit is decided locally against ``shared + pending``: the shared count of the key
    (all replicas, as of this replica's last flush) plus this replica's own hits since. The
    flush (:meth:`drain`, then :meth:`learn` with what the store answers) adds the pending
    hits to the shared counts and reads them back. A key whose count reaches the limit is
    refused here until its window ends. Between two flushes another replica's hits are not
    seen, so with N replicas the limit can be passed by at most what N-1 replicas admit in
    one flush interval.
    """

    def __init__(self, *, max_hits: int, window: Window) -> None:
        if max_hits <= 0:
            raise ValueError("max_hits must be positive")
        self.max_hits = max_hits
        self.window = window
        self._window_start: int | None = None
        self._shared: dict[str, int] = {}
        self._pending: dict[str, int] = {}

    def _roll(self, now: float) -> None:
        start = self.window.start(now)
        if start != self._window_start:
            # A new window: the old one's counts (and any unflushed hits) no longer matter.
            self._window_start = start
            self._shared = {}
            self._pending = {}

    def hit(self, key: str, *, now: float) -> int | None:
        """Count a request of ``key``: None when allowed, else the Retry-After seconds."""
        self._roll(now)
        pending = self._pending.get(key, 0)
        if self._shared.get(key, 0) + pending >= self.max_hits:
            return self.window.retry_after(now)
        self._pending[key] = pending + 1
        return None

    def drain(self, *, now: float) -> Deltas | None:
        """The pending hits of the current window, handed over to be flushed (None: none)."""
        self._roll(now)
        if not self._pending or self._window_start is None:
            return None
        deltas = Deltas(self._window_start, self._window_start + self.window.seconds, self._pending)
        self._pending = {}
        return deltas

    def restore(self, deltas: Deltas) -> None:
        """Give back hits whose flush failed, to be flushed with the next ones."""
        if deltas.window_start != self._window_start:
            return
        for key, hits in deltas.hits.items():
            self._pending[key] = self._pending.get(key, 0) + hits

    def learn(self, window_start: int, shared: Mapping[str, int]) -> None:
        """The shared counts the store answered for a flush of ``window_start``."""
        if window_start != self._window_start:
            return
        for key, hits in shared.items():
            self._shared[key] = max(self._shared.get(key, 0), hits)

    def shared(self, key: str) -> int:
        """The shared count of ``key`` as last learned (0 when unknown)."""
        return self._shared.get(key, 0)

    def __len__(self) -> int:
        """Keys this replica tracks in the current window."""
        return len(self._shared.keys() | self._pending.keys())
