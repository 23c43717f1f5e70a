"""An owning service's error answer raised again by its caller: the caller's own refusals
pass on with their message and details, anything else is the owner being unavailable."""

from __future__ import annotations

import pytest

from jobs_common.errors import (
    Conflict,
    NotFound,
    TooManyRequests,
    UpstreamUnavailable,
    ValidationFailed,
    error_from_answer,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("status", "error"),
    [(404, NotFound), (409, Conflict), (422, ValidationFailed), (429, TooManyRequests)],
)
def test_a_refusal_passes_on_as_it_was(status: int, error: type[Exception]) -> None:
    body = {"error": "x", "message": "said so", "details": [{"field": "name", "message": "m"}]}
    raised = error_from_answer(status, body, owner="scheduler")
    assert type(raised) is error
    assert raised.envelope()["message"] == "said so"
    assert raised.envelope()["details"] == [{"field": "name", "message": "m"}]


@pytest.mark.parametrize(
    ("status", "body"),
    [(401, {"error": "unauthorized", "message": "bad token"}), (500, None), (404, "<html>")],
)
def test_anything_else_is_the_owner_unavailable(status: int, body: object) -> None:
    raised = error_from_answer(status, body, owner="scheduler")
    assert isinstance(raised, UpstreamUnavailable)
    assert raised.message == f"the scheduler answered {status}; retry"
