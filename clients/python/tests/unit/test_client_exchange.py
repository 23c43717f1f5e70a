"""The retry and renewal rules of one call, driven by hand: the exchange generator is fed the
outcomes a network could give (no transport, no server), and each step it asks for is
checked: what is sent again, with which headers, after which pause, and what is raised."""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any

import httpx
import pytest

from jobs_client import calls
from jobs_client.auth import Credentials
from jobs_client.errors import (
    AuthError,
    RateLimited,
    ServerError,
    TransportFailure,
    ValidationError,
)
from jobs_client.exchange import Call, Outcome, Renew, Send, Sleep, Step, exchange
from jobs_client.models import Tokens
from jobs_client.retries import Retries

pytestmark = pytest.mark.unit

NO_JITTER = Retries(attempts=4, backoff=0.5, max_backoff=2.0, jitter=False)
ERROR = {"error": "service_unavailable", "message": "down", "details": []}


def answer(status: int, body: Any = None, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body if body is not None else {}, headers=headers)


class Drive:
    """Runs an exchange, answering each Send from a script and recording every step."""

    def __init__(self, call: Call[Any], credentials: Credentials, retries: Retries) -> None:
        self.steps: list[Step] = []
        self._gen: Generator[Step, Outcome, httpx.Response] = exchange(
            call, credentials=credentials, retries=retries, rng=random.Random(7)
        )
        self.credentials = credentials

    def run(self, *outcomes: httpx.Response | httpx.TransportError) -> httpx.Response:
        script = list(outcomes)
        reply: Outcome = None
        try:
            while True:
                step = self._gen.send(reply)
                self.steps.append(step)
                reply = None
                if isinstance(step, Send):
                    reply = script.pop(0)
                elif isinstance(step, Renew):
                    fresh = Tokens(access_token="fresh", refresh_token="r2", expires_at=None)
                    self.credentials.accept(fresh)
        except StopIteration as done:
            assert script == [], "the exchange stopped before using every outcome"
            response: httpx.Response = done.value
            return response

    def sends(self) -> list[Send]:
        return [s for s in self.steps if isinstance(s, Send)]

    def sleeps(self) -> list[float]:
        return [s.seconds for s in self.steps if isinstance(s, Sleep)]


def session(**overrides: Any) -> Credentials:
    tokens = Tokens(access_token="t1", refresh_token="r1", expires_at=None)
    return Credentials(tokens=overrides.pop("tokens", tokens), **overrides)


def submit_call() -> Call[Any]:
    body = calls.job_body(type="simulate", payload={}, priority=2)
    return calls.submit(body, idempotency_key=None)


def test_a_submission_is_sent_again_with_the_same_idempotency_key_after_a_cut_connection() -> None:
    drive = Drive(submit_call(), session(), NO_JITTER)
    cut = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    response = drive.run(httpx.ConnectError("refused"), cut, answer(202, {"jobId": "j1"}))
    assert response.status_code == 202
    keys = {s.headers["Idempotency-Key"] for s in drive.sends()}
    assert len(drive.sends()) == 3 and len(keys) == 1
    assert drive.sleeps() == [0.5, 1.0]
    assert all(s.headers["Authorization"] == "Bearer t1" for s in drive.sends())


def test_a_command_is_not_sent_again_once_it_may_have_arrived() -> None:
    drive = Drive(calls.cancel_job("j1", reason=None), session(), NO_JITTER)
    with pytest.raises(TransportFailure) as raised:
        drive.run(httpx.ReadTimeout("slow"))
    assert raised.value.maybe_processed is True
    assert len(drive.sends()) == 1


def test_a_command_that_never_left_is_sent_again() -> None:
    drive = Drive(calls.cancel_job("j1", reason=None), session(), NO_JITTER)
    drive.run(httpx.ConnectError("refused"), answer(200, {"jobId": "j1", "status": "cancelled"}))
    assert len(drive.sends()) == 2
    with pytest.raises(ServerError):  # a 503 may have done it: not repeated either
        Drive(calls.cancel_job("j1", reason=None), session(), NO_JITTER).run(answer(503, ERROR))


def test_transient_answers_are_retried_within_the_budget_then_raised() -> None:
    drive = Drive(calls.get_job("j1"), session(), NO_JITTER)
    with pytest.raises(ServerError) as raised:
        drive.run(answer(502, ERROR), answer(503, ERROR), answer(504, ERROR), answer(503, ERROR))
    assert raised.value.status == 503 and raised.value.code == "service_unavailable"
    assert len(drive.sends()) == 4
    assert drive.sleeps() == [0.5, 1.0, 2.0]  # doubling, capped at max_backoff


def test_retry_after_is_honoured_and_never_shortened() -> None:
    drive = Drive(calls.get_job("j1"), session(), NO_JITTER)
    drive.run(
        answer(429, ERROR, **{"Retry-After": "3"}),
        answer(503, ERROR, **{"Retry-After": "1"}),
        answer(200, {}),
    )
    assert drive.sleeps() == [3.0, 1.0]  # 503: max(backoff 1.0, Retry-After 1)


def test_a_429_without_retry_after_or_beyond_the_limit_is_raised_at_once() -> None:
    with pytest.raises(RateLimited) as raised:
        Drive(calls.get_job("j1"), session(), NO_JITTER).run(answer(429, ERROR))
    assert raised.value.retry_after is None
    patient = Retries(attempts=3, max_retry_after=10)
    with pytest.raises(RateLimited) as raised:
        Drive(calls.get_job("j1"), session(), patient).run(
            answer(429, ERROR, **{"Retry-After": "60"})
        )
    assert raised.value.retry_after == 60.0


def test_client_errors_are_never_retried() -> None:
    invalid = {
        "error": "validation_error",
        "message": "bad",
        "details": [{"field": "type", "message": "unknown job type"}],
    }
    drive = Drive(submit_call(), session(), NO_JITTER)
    with pytest.raises(ValidationError) as raised:
        drive.run(answer(422, invalid))
    assert raised.value.fields == {"type": ["unknown job type"]}
    assert len(drive.sends()) == 1


def test_a_refused_token_is_renewed_once_and_the_call_sent_again() -> None:
    drive = Drive(calls.get_job("j1"), session(), NO_JITTER)
    drive.run(answer(401, {"error": "unauthorized", "message": "token expired"}), answer(200, {}))
    assert [type(s).__name__ for s in drive.steps] == ["Send", "Renew", "Send"]
    assert drive.steps[1] == Renew("t1")
    assert [s.headers["Authorization"] for s in drive.sends()] == ["Bearer t1", "Bearer fresh"]

    twice = Drive(calls.get_job("j1"), session(), NO_JITTER)
    with pytest.raises(AuthError):
        twice.run(answer(401, {"error": "unauthorized"}), answer(401, {"error": "unauthorized"}))


def test_a_fixed_token_is_not_renewed() -> None:
    drive = Drive(calls.get_job("j1"), Credentials(token="fixed"), NO_JITTER)
    with pytest.raises(AuthError):
        drive.run(answer(401, {"error": "unauthorized", "message": "token expired"}))
    assert not any(isinstance(s, Renew) for s in drive.steps)


def test_an_expiring_token_is_renewed_before_the_call() -> None:
    soon = Tokens(access_token="t1", refresh_token="r1", expires_at=1000.0)
    credentials = Credentials(tokens=soon, clock=lambda: 950.0)  # 50 s left: inside the margin
    drive = Drive(calls.get_job("j1"), credentials, NO_JITTER)
    drive.run(answer(200, {}))
    assert isinstance(drive.steps[0], Renew)
    assert drive.sends()[0].headers["Authorization"] == "Bearer fresh"


def test_without_credentials_nothing_is_sent() -> None:
    drive = Drive(calls.get_job("j1"), Credentials(), NO_JITTER)
    with pytest.raises(AuthError, match="not logged in"):
        drive.run()
    assert drive.steps == []


def test_login_and_refresh_calls_are_unauthenticated_and_refresh_is_never_replayed() -> None:
    credentials = Credentials(email="a@example.com", password="pw", tokens=None)
    assert credentials.must_renew()  # logs in at the first call
    credentials.accept(Tokens(access_token="t", refresh_token="r", expires_at=None))
    refresh, login = credentials.renewal_calls()
    assert (refresh.path, refresh.replay_safe, refresh.authenticated) == (
        "/auth/refresh",
        False,
        False,
    )
    assert refresh.body == {"refreshToken": "r"}
    assert (login.path, login.replay_safe) == ("/auth/login", True)
    drive = Drive(refresh, credentials, NO_JITTER)
    with pytest.raises(TransportFailure):
        drive.run(httpx.RemoteProtocolError("cut"))  # a used refresh token: not sent again


def test_backoff_with_jitter_stays_under_the_doubling_ceiling() -> None:
    retries = Retries(backoff=0.25, max_backoff=8.0)
    rng = random.Random(1)
    for retry, ceiling in [(1, 0.25), (2, 0.5), (3, 1.0), (6, 8.0), (10, 8.0)]:
        delays = [retries.delay(retry, rng) for _ in range(50)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2  # drawn over the whole range, not a fixed value


def test_a_budget_of_one_attempt_never_retries() -> None:
    drive = Drive(submit_call(), session(), Retries(attempts=1))
    with pytest.raises(TransportFailure) as raised:
        drive.run(httpx.ConnectError("refused"))
    assert raised.value.maybe_processed is False
    with pytest.raises(ValueError):
        Retries(attempts=0)


class Store:
    def __init__(self, tokens: Tokens | None) -> None:
        self.tokens = tokens
        self.saved: list[Tokens] = []

    def load(self) -> Tokens | None:
        return self.tokens

    def save(self, tokens: Tokens) -> None:
        self.saved.append(tokens)
        self.tokens = tokens


def test_a_pair_another_process_refreshed_is_taken_instead_of_spending_ours() -> None:
    ours = Tokens(access_token="a1", refresh_token="r1", expires_at=1000.0)
    store = Store(ours)
    credentials = Credentials(store=store, clock=lambda: 990.0)
    assert credentials.tokens == ours and credentials.must_renew()
    assert credentials.adopt_stored() is False  # the store holds what we hold: refresh

    store.tokens = Tokens(access_token="a2", refresh_token="r2", expires_at=1900.0)
    assert credentials.adopt_stored() is True
    assert credentials.access_token == "a2" and not credentials.must_renew()

    store.tokens = Tokens(access_token="a3", refresh_token="r3", expires_at=1000.0)
    assert credentials.adopt_stored() is False  # about to expire as well: no better

    credentials.accept(Tokens(access_token="a4", refresh_token="r4", expires_at=2000.0))
    assert store.saved[-1].access_token == "a4"  # every renewal is saved
