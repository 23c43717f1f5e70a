"""Which deliveries a worker claims before running them (issue 31): a redelivery, a relay's
copy, a first delivery that waited past its freshness; never a fresh first delivery."""

from __future__ import annotations

import uuid
from datetime import timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest
from aio_pika.abc import AbstractIncomingMessage

from jobs_common.contracts import COPY_HEADER, FRESH_DISPATCH, FRESH_HEADER, JobDispatch, utcnow
from jobs_worker.app.execution import claim_to_ask

pytestmark = pytest.mark.unit


def delivery(*, redelivered: bool = False, headers: dict[str, Any] | None = None) -> Any:
    return cast(AbstractIncomingMessage, SimpleNamespace(redelivered=redelivered, headers=headers))


def dispatch(*, age: float = 0.0, fresh: float | None = 5.0) -> JobDispatch:
    at = utcnow() - timedelta(seconds=age)
    return JobDispatch(
        job_id=uuid.uuid4(),
        attempt=1,
        job_type="simulate",
        priority=2,
        payload={},
        timeout_seconds=30,
        dispatched_at=at,
        fresh_until=None if fresh is None else at + timedelta(seconds=fresh),
    )


def test_a_fresh_first_delivery_runs_without_asking() -> None:
    assert claim_to_ask(delivery(headers={"trace_id": "t"}), dispatch(age=1)) is None
    assert claim_to_ask(delivery(), dispatch(age=600, fresh=None)) is None  # an old scheduler's


def test_a_redelivery_waits_from_its_first_ask() -> None:
    ask = claim_to_ask(delivery(redelivered=True), dispatch())
    assert ask is not None and (ask.why, ask.since, ask.waits) == ("redelivered", None, True)


def test_a_copy_waits_from_its_dispatch() -> None:
    sent = dispatch(age=1)
    ask = claim_to_ask(delivery(headers={COPY_HEADER: 1}), sent)
    assert ask is not None and (ask.why, ask.since) == ("copy", sent.dispatched_at)


def test_a_first_delivery_past_its_freshness_asks_without_waiting() -> None:
    ask = claim_to_ask(delivery(), dispatch(age=6))
    assert ask is not None and (ask.why, ask.since, ask.waits) == ("stale", None, False)


def test_the_relays_fresh_window_overrides_the_dispatchs() -> None:
    """Published behind a backlog, a dispatch is fresh for longer (the relay's header)."""
    sent = dispatch(age=20)  # past its own fresh_until (5 s)
    later = round((utcnow() + timedelta(seconds=10)).timestamp() * 1000)
    assert claim_to_ask(delivery(headers={FRESH_HEADER: later}), sent) is None
    earlier = round((utcnow() - timedelta(seconds=1)).timestamp() * 1000)
    ask = claim_to_ask(delivery(headers={FRESH_HEADER: earlier}), sent)
    assert ask is not None and ask.why == "stale"
    garbage = claim_to_ask(delivery(headers={FRESH_HEADER: "soon"}), sent)
    assert garbage is not None and garbage.why == "stale"  # the dispatch's own window


def test_a_copy_asks_past_its_first_copys_fresh_window() -> None:
    sent = dispatch(age=1)
    window = sent.dispatched_at + timedelta(seconds=30)
    headers = {COPY_HEADER: 1, FRESH_HEADER: round(window.timestamp() * 1000)}
    ask = claim_to_ask(delivery(headers=headers), sent)
    assert ask is not None and ask.why == "copy"
    # The scheduler grants it a lease after claim_since: past the first copy's window.
    assert ask.since is not None
    assert abs(ask.since - (window - FRESH_DISPATCH)) < timedelta(milliseconds=1)
