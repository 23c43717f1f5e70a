"""Bounded requests at the submission service: bodies above a route's limit (413, also when
chunked), per-field limits and control characters (422 naming the field), bounded batches,
validated ids and methods. Whatever is refused leaves nothing in MongoDB (nor its outbox)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from jobs_common.body_limit import MIB
from jobs_worker.handlers.payloads import MAX_EMAIL_BODY_CHARS

from .conftest import EMAIL_JOB, AppFactory

pytestmark = pytest.mark.integration


def email(**payload: Any) -> dict[str, Any]:
    return {**EMAIL_JOB, "payload": {**EMAIL_JOB["payload"], **payload}}


def refused_fields(response: httpx.Response) -> set[str]:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    return {detail["field"] for detail in body["details"]}


def assert_too_large(response: httpx.Response) -> None:
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["error"] == "payload_too_large"
    assert body["details"][0]["field"] == "body"


async def test_a_12_mb_email_is_refused_before_it_is_read(
    app_factory: AppFactory, stored: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        response = await app.submit(email(body="x" * (12 * MIB)))
        assert_too_large(response)
    assert await stored() == 0


async def test_a_chunked_body_is_cut_at_the_limit(app_factory: AppFactory, stored: Any) -> None:
    sent = 0
    chunk = b"x" * (64 * 1024)

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(1_000):  # 64 MB if it were all read
            sent += 1
            yield chunk

    async with app_factory(relay_enabled=False, max_job_body_bytes=MIB) as app:
        response = await app.client.post(
            "/api/v1/jobs",
            content=endless(),
            headers={**app.headers(), "content-type": "application/json"},
        )
        assert "content-length" not in response.request.headers
        assert_too_large(response)
    assert sent <= MIB // len(chunk) + 1  # read up to the limit, not a chunk more
    assert await stored() == 0


async def test_a_body_within_the_limit_still_reaches_validation(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        too_long = await app.submit(email(body="x" * (MAX_EMAIL_BODY_CHARS + 1)))
        assert refused_fields(too_long) == {"payload.body"}
        just_right = await app.submit(email(body="line one\r\nline two\ttabbed\n" * 1000))
        assert just_right.status_code == 202, just_right.text
    assert await collection.count_documents({}) == 1


@pytest.mark.parametrize(
    ("job", "field"),
    [
        (email(subject="hi\r\nBcc: victim@example.com"), "payload.subject"),
        (email(subject="hi\nthere"), "payload.subject"),
        (email(subject="nul\x00"), "payload.subject"),
        (email(subject="tab\there"), "payload.subject"),
        (email(subject="line\u2028separator"), "payload.subject"),
        (email(subject="s" * 201), "payload.subject"),
        (email(to="someone@example.com\r\nBcc: victim@example.com"), "payload.to"),
        (email(to="Someone\r\n <someone@example.com>"), "payload.to"),
        (email(to="x" * 400 + "@example.com"), "payload.to"),
        (email(body="nul\x00byte"), "payload.body"),
        (email(body="escape\x1b[31m"), "payload.body"),
    ],
)
async def test_header_bound_and_free_text_fields_are_bounded(
    app_factory: AppFactory, stored: Any, job: dict[str, Any], field: str
) -> None:
    async with app_factory(relay_enabled=False) as app:
        assert field in refused_fields(await app.submit(job))
    assert await stored() == 0


@pytest.mark.parametrize(
    ("job_type", "payload"),
    [
        ("email", {"to": "a@example.com", "subject": "s", "body": "é" * 140_000}),
        ("simulate", {"minSeconds": 0, "padding": "x" * (300 * 1024)}),
        ("report_generation", {"reportType": "jobs_summary", "format": "csv", "x": "y" * 300_000}),
        ("image_resize", {"width": 1, "height": 1, "imageBase64": "A" * (8 * 1024 * 1024)}),
    ],
)
async def test_every_job_type_has_a_payload_size_limit(
    app_factory: AppFactory, stored: Any, job_type: str, payload: dict[str, Any]
) -> None:
    async with app_factory(relay_enabled=False, max_job_body_bytes=16 * MIB) as app:
        response = await app.submit({"type": job_type, "priority": 1, "payload": payload})
        assert refused_fields(response) == {"payload"}
        assert "bytes" in response.json()["details"][0]["message"]
    assert await stored() == 0


async def test_batches_are_bounded_in_jobs_and_bytes(app_factory: AppFactory, stored: Any) -> None:
    simulate = {"type": "simulate", "priority": 1, "payload": {"minSeconds": 0}}
    # under the body limit, over the payload total: 13 members of 1 MB each
    big = {"type": "simulate", "priority": 1, "payload": {"pad": "x" * MIB}}
    async with app_factory(relay_enabled=False) as app:
        too_many = await app.submit_batch({"jobs": [simulate] * 10_001})
        assert refused_fields(too_many) == {"jobs"}
        too_heavy = await app.submit_batch({"jobs": [big] * 13})
        assert refused_fields(too_heavy) == {"jobs"}
        assert "bytes" in too_heavy.json()["details"][0]["message"]
        bad_member = await app.submit_batch(
            {
                "jobs": [
                    simulate,
                    {**EMAIL_JOB, "payload": {**EMAIL_JOB["payload"], "subject": "a\rb"}},
                ]
            }
        )
        assert refused_fields(bad_member) == {"jobs.1.payload.subject"}
        long_name = await app.submit_batch({"jobs": [simulate], "name": "n" * 201})
        assert refused_fields(long_name) == {"name"}
        above_limit = await app.client.post(
            "/api/v1/batches",
            content=b'{"jobs": [' + b" " * (16 * MIB) + b"]}",
            headers={**app.headers(), "content-type": "application/json"},
        )
        assert_too_large(above_limit)
    assert await stored() == 0


async def test_header_values_are_refused_with_control_characters(
    app_factory: AppFactory, stored: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        for key in ("a\x01b", "tab\tkey", "del\x7f"):
            assert refused_fields(await app.submit(key=key)) == {"Idempotency-Key"}
        trace = await app.client.post(
            "/api/v1/jobs", json=EMAIL_JOB, headers={**app.headers(), "X-Trace-Id": "t\x1bx"}
        )
        assert refused_fields(trace) == {"X-Trace-Id"}
    assert await stored() == 0


async def test_garbage_ids_are_422_or_404_and_other_methods_405(app_factory: AppFactory) -> None:
    async with app_factory(relay_enabled=False) as app:
        for garbage in ("not-a-uuid", "-1", "4143720578230162944", "x" * 10_000, "%00"):
            for path in (f"/api/v1/jobs/{garbage}/status", f"/api/v1/batches/{garbage}/status"):
                response = await app.client.get(path, headers=app.headers())
                assert response.status_code in (404, 422), (path[:40], response.text)
                assert "error" in response.json()
        unknown = await app.client.get(f"/api/v1/jobs/{uuid.uuid4()}/status", headers=app.headers())
        assert unknown.status_code == 404
        for method, path, allow in (
            ("TRACE", "/api/v1/jobs", "POST"),
            ("GET", "/api/v1/batches", "POST"),
            ("DELETE", f"/api/v1/jobs/{uuid.uuid4()}/status", "GET"),
        ):
            response = await app.client.request(method, path, headers=app.headers())
            assert response.status_code == 405, response.text
            assert response.json()["error"] == "method_not_allowed"
            assert response.headers["allow"] == allow
