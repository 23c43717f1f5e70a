"""Who the client is: a fixed access token, or a session it keeps alive.

Three ways in, in this order of precedence:

* ``token=`` (or ``JOBS_TOKEN`` when nothing else is given): used as is; it cannot be renewed,
  so once it expires (15 minutes at most) calls raise :class:`~jobs_client.errors.AuthError`;
* ``tokens=`` or a ``token_store`` holding a session (the CLI's session file): refreshed
  before the access token expires and once on a ``401``;
* ``email=`` and ``password=``: logged in at the first call; when a refresh is refused (the
  session was revoked or ran out after 7 days) it logs in again.

Refresh tokens are single-use and rotating (docs/gateway.md, "Sessions"): a refresh token sent
twice revokes the whole session. So renewals are single-flight in a client (a lock in each
client), the refresh is never sent again after an unanswered attempt, and before refreshing
the client reads its store again: when another process sharing it has refreshed meanwhile,
its newer pair is taken instead of spending the used one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import httpx

from jobs_client.exchange import Call
from jobs_client.models import Tokens

#: Renew this many seconds before the access token's ``exp``.
RENEW_MARGIN_SECONDS = 60.0


class TokenStore(Protocol):
    """Where a session is kept between runs (:class:`jobs_client.session.SessionFile`)."""

    def load(self) -> Tokens | None: ...

    def save(self, tokens: Tokens) -> None: ...


def login_call(email: str, password: str, clock: Callable[[], float]) -> Call[Tokens]:
    def parse(response: httpx.Response) -> Tokens:
        return Tokens.from_login(response.json(), now=clock())

    # A second login only opens a second session: safe to repeat.
    return Call(
        "POST",
        "/auth/login",
        parse,
        body={"email": email, "password": password},
        replay_safe=True,
        authenticated=False,
    )


def refresh_call(refresh_token: str, clock: Callable[[], float]) -> Call[Tokens]:
    def parse(response: httpx.Response) -> Tokens:
        return Tokens.from_login(response.json(), now=clock())

    # Single-use: never replayed (a replay would revoke the session).
    return Call(
        "POST",
        "/auth/refresh",
        parse,
        body={"refreshToken": refresh_token},
        replay_safe=False,
        authenticated=False,
    )


def logout_call(refresh_token: str) -> Call[None]:
    return Call(
        "POST",
        "/auth/logout",
        lambda response: None,
        body={"refreshToken": refresh_token},
        replay_safe=True,
        authenticated=False,
    )


class Credentials:
    """The client's current tokens and how to renew them (no I/O but the store's)."""

    def __init__(
        self,
        *,
        token: str | None = None,
        tokens: Tokens | None = None,
        email: str | None = None,
        password: str | None = None,
        store: TokenStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (email is None) != (password is None):
            raise ValueError("give both email and password, or neither")
        self._email = email
        self._password = password
        self._store = store
        self._clock = clock
        if token is not None:
            tokens = Tokens(access_token=token, refresh_token=None, expires_at=None)
        elif tokens is None and store is not None:
            tokens = store.load()
        self._tokens = tokens

    @property
    def tokens(self) -> Tokens | None:
        return self._tokens

    @property
    def access_token(self) -> str | None:
        return self._tokens.access_token if self._tokens else None

    def can_renew(self) -> bool:
        return self._password is not None or bool(
            self._tokens and self._tokens.refresh_token is not None
        )

    def _expiring(self, tokens: Tokens) -> bool:
        return (
            tokens.expires_at is not None
            and self._clock() >= tokens.expires_at - RENEW_MARGIN_SECONDS
        )

    def must_renew(self) -> bool:
        """No token yet but a login is possible, or the token is about to expire and can
        be renewed."""
        if self._tokens is None:
            return self._password is not None
        return self.can_renew() and self._expiring(self._tokens)

    def adopt_stored(self) -> bool:
        """Take the store's session when it holds a fresher pair than ours (another process
        refreshed it); True when it did."""
        if self._store is None:
            return False
        stored = self._store.load()
        if stored is None or self._tokens is None:
            return False
        if stored.access_token == self._tokens.access_token or self._expiring(stored):
            return False
        self._tokens = stored
        return True

    def renewal_calls(self) -> list[Call[Tokens]]:
        """What to try, in order: the refresh, then a new login when there is a password."""
        calls: list[Call[Tokens]] = []
        if self._tokens is not None and self._tokens.refresh_token is not None:
            calls.append(refresh_call(self._tokens.refresh_token, self._clock))
        if self._email is not None and self._password is not None:
            calls.append(login_call(self._email, self._password, self._clock))
        return calls

    def accept(self, tokens: Tokens) -> None:
        self._tokens = tokens
        if self._store is not None:
            self._store.save(tokens)

    def use_password(self, email: str, password: str) -> None:
        self._email = email
        self._password = password

    def login_call(self) -> Call[Tokens]:
        if self._email is None or self._password is None:
            raise ValueError("no email and password to log in with")
        return login_call(self._email, self._password, self._clock)

    def logout_call(self) -> Call[None] | None:
        if self._tokens is None or self._tokens.refresh_token is None:
            return None
        return logout_call(self._tokens.refresh_token)

    def forget(self) -> None:
        self._tokens = None
