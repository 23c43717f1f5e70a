"""Each error answer of the API becomes its typed exception, carrying the envelope."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from jobs_client import (
    AuthError,
    Conflict,
    Forbidden,
    JobsClient,
    JobsError,
    NotFound,
    RateLimited,
    Retries,
    ServerError,
    ValidationError,
)
from jobs_client.errors import error_from_response

pytestmark = pytest.mark.unit


def envelope(code: str, message: str = "m", details: Any = ()) -> dict[str, Any]:
    return {"error": code, "message": message, "details": list(details)}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, ValidationError),
        (413, ValidationError),
        (422, ValidationError),
        (401, AuthError),
        (403, Forbidden),
        (404, NotFound),
        (409, Conflict),
        (429, RateLimited),
        (500, ServerError),
        (503, ServerError),
        (418, JobsError),
    ],
)
def test_status_maps_to_its_exception(status: int, kind: type[JobsError]) -> None:
    error = error_from_response(
        httpx.Response(status, json=envelope("code"), headers={"X-Request-Id": "req-1"})
    )
    assert type(error) is kind
    assert (error.status, error.code, error.message, error.request_id) == (
        status,
        "code",
        "m",
        "req-1",
    )


def test_a_validation_error_lists_its_fields_by_path() -> None:
    body = envelope(
        "validation_error",
        "invalid job",
        [
            {"field": "payload.minSeconds", "message": "must be >= 0"},
            {"field": "jobs.3.payload.to", "message": "not an email"},
            {"field": "payload.minSeconds", "message": "not a number"},
        ],
    )
    error = error_from_response(httpx.Response(422, json=body))
    assert isinstance(error, ValidationError)
    assert error.fields == {
        "payload.minSeconds": ["must be >= 0", "not a number"],
        "jobs.3.payload.to": ["not an email"],
    }
    assert error.envelope == body
    assert "payload.minSeconds: must be >= 0" in str(error)


def test_rate_limited_carries_retry_after() -> None:
    error = error_from_response(
        httpx.Response(429, json=envelope("too_many_requests"), headers={"Retry-After": "17"})
    )
    assert isinstance(error, RateLimited) and error.retry_after == 17.0
    capped = error_from_response(httpx.Response(429, json=envelope("too_many_requests")))
    assert isinstance(capped, RateLimited) and capped.retry_after is None


def test_an_answer_without_an_envelope_still_maps() -> None:
    error = error_from_response(httpx.Response(502, text="<html>Bad gateway</html>"))
    assert isinstance(error, ServerError)
    assert error.code is None and "Bad gateway" in error.message


def test_the_client_raises_them_from_its_calls() -> None:
    """Through the sync client's own request loop, over a local MockTransport."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/api/jobs/missing"):
            return httpx.Response(404, json=envelope("not_found", "job not found"))
        return httpx.Response(
            422,
            json=envelope(
                "validation_error", "bad", [{"field": "type", "message": "unknown job type"}]
            ),
        )

    with JobsClient(
        "http://jobs.invalid",
        token="t",
        transport=httpx.MockTransport(handler),
        retries=Retries(attempts=1),
    ) as client:
        with pytest.raises(NotFound, match="job not found"):
            client.get("missing")
        with pytest.raises(ValidationError) as raised:
            client.submit("nope", {})
    assert raised.value.fields == {"type": ["unknown job type"]}
