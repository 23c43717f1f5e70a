"""Input the stores cannot hold is refused before anything is stored (docs/submission.md,
"Limits"): a NUL (U+0000) in any string or object key of a job, a batch member or a payload
check, of a built-in or an announced type, is 422 naming the field; a lone surrogate is 400
(not valid JSON text); a NUL in the URL or a header is 422; an announced type's payload is
bounded like every payload. A batch with one such member is refused whole.

Without the check, PostgreSQL refuses the NUL when the scheduler records the job: a job of an
announced type with a ``str`` field was accepted (202), published, and never recorded."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from jobs_common.contracts import JobTypeInfo, WorkerTypes, utcnow
from jobs_common.payloads import MAX_PAYLOAD_BYTES
from jobs_common.storable_text import NUL_MESSAGE, UNPARSABLE_BODY

from .conftest import EMAIL_JOB, AppFactory, Broker, RunningApp, wait_until
from .test_submission_job_types import announce

pytestmark = pytest.mark.integration

TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}
FREE_SCHEMA: dict[str, Any] = {"type": "object"}  # any payload at all
JSON = {"Content-Type": "application/json"}


def announcement() -> WorkerTypes:
    return WorkerTypes(
        worker_id="w1",
        types=[
            JobTypeInfo(
                job_type=name,
                payload_schema=schema,
                timeout_seconds=30,
                max_attempts=3,
                queue="default",
                slots=1,
            )
            for name, schema in (("acme.text", TEXT_SCHEMA), ("acme.free", FREE_SCHEMA))
        ],
        sent_at=utcnow(),
    )


async def with_types(app: RunningApp, broker: Broker) -> None:
    await announce(broker, announcement())

    async def known() -> bool:
        answer = await app.client.get("/api/v1/job-types", headers=app.headers())
        return {"acme.text", "acme.free"} <= {t["type"] for t in answer.json()["types"]}

    await wait_until(known)


def text_job(text: str = "fine") -> str:
    """A job as JSON text, so escapes reach the service as a client writes them."""
    return f'{{"type": "acme.text", "priority": 2, "payload": {{"text": "{text}"}}}}'


async def post(app: RunningApp, path: str, content: str, **headers: str) -> httpx.Response:
    return await app.client.post(
        path, content=content.encode(), headers={**app.headers(), **JSON, **headers}
    )


def refused(response: httpx.Response, status: int) -> list[str]:
    """The fields of a refusal in the documented envelope."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "message", "details"}
    assert body["error"] == {400: "bad_request", 422: "validation_error"}[status]
    assert all(set(detail) == {"field", "message"} for detail in body["details"])
    return [detail["field"] for detail in body["details"]]


async def test_a_nul_in_an_announced_types_str_field_is_422_and_nothing_is_stored(
    app_factory: AppFactory, broker: Broker, stored: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        before = await stored()
        response = await post(app, "/api/v1/jobs", text_job("a\\u0000b"))
        assert refused(response, 422) == ["payload.text"]
        assert response.json()["details"][0]["message"] == NUL_MESSAGE
        assert await stored() == before
        assert (await post(app, "/api/v1/jobs", text_job("a\\u0001b ✓"))).status_code == 202


@pytest.mark.parametrize(
    ("job", "status", "field"),
    [
        # anywhere in a free-form payload, keys included
        (
            '{"type": "acme.free", "priority": 2, "payload": {"a": [{"b": "\\u0000"}]}}',
            422,
            "payload.a.0.b",
        ),
        ('{"type": "acme.free", "priority": 2, "payload": {"k\\u0000": 1}}', 422, "payload.k\\x00"),
        # every other field of the job, before its own rules
        ('{"type": "acme.text\\u0000", "priority": 2, "payload": {}}', 422, "type"),
        (
            '{"type": "email", "priority": 2, "submittedBy": "user@test.com\\u0000", '
            '"payload": {}}',
            422,
            "submittedBy",
        ),
        (
            '{"type": "acme.free", "priority": 2, "retryPolicy": "fast\\u0000", "payload": {}}',
            422,
            "retryPolicy",
        ),
        (
            '{"type": "acme.free", "priority": 2, "runAt": "2030-01-01T00:00:00Z\\u0000", '
            '"payload": {}}',
            422,
            "runAt",
        ),
        (
            '{"type": "acme.free", "priority": 2, "dependsOn": ["\\u0000"], "payload": {}}',
            422,
            "dependsOn.0",
        ),
        # built-in types too
        (
            '{"type": "simulate", "priority": 2, "payload": {"seed\\u0000": 1}}',
            422,
            "payload.seed\\x00",
        ),
        (
            '{"type": "report_generation", "priority": 2, "payload": {"reportType": '
            '"jobs_summary\\u0000", "format": "csv"}}',
            422,
            "payload.reportType",
        ),
    ],
)
async def test_a_nul_anywhere_in_a_job_is_422_naming_it(
    app_factory: AppFactory, broker: Broker, stored: Any, job: str, status: int, field: str
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        before = await stored()
        assert refused(await post(app, "/api/v1/jobs", job), status) == [field]
        assert await stored() == before


@pytest.mark.parametrize(
    "job",
    [
        text_job("\\ud800"),
        text_job("x\\udfffy"),
        '{"type": "acme.free", "priority": 2, "payload": {"\\udc00": 1}}',
        '{"type": "email", "priority": 2, "payload": {"to": "a@b.c", "subject": "\\ud83d", '
        '"body": "x"}}',
    ],
)
async def test_a_lone_surrogate_is_400_not_json_text(
    app_factory: AppFactory, broker: Broker, stored: Any, job: str
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        before = await stored()
        response = await post(app, "/api/v1/jobs", job)
        refused(response, 400)
        assert response.json()["message"] == UNPARSABLE_BODY
        assert await stored() == before


async def test_an_announced_types_payload_is_bounded_like_every_payload(
    app_factory: AppFactory, broker: Broker, stored: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        before = await stored()
        over = await post(app, "/api/v1/jobs", text_job("x" * MAX_PAYLOAD_BYTES))
        assert refused(over, 422) == ["payload"]
        assert "bytes" in over.json()["details"][0]["message"]
        member = "".join(["[", text_job("x" * MAX_PAYLOAD_BYTES), "]"])
        batch = await post(app, "/api/v1/batches", f'{{"jobs": {member}}}')
        assert refused(batch, 422) == ["jobs.0.payload"]
        assert await stored() == before
        assert (await post(app, "/api/v1/jobs", text_job("x" * 200_000))).status_code == 202


async def test_a_batch_with_one_such_member_is_refused_whole(
    app_factory: AppFactory, broker: Broker, stored: Any, collection: Any, batches: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        before = await stored()
        members = [text_job(f"job {i}") for i in range(100)]
        members[57] = text_job("bad \\u0000 one")
        body = f'{{"name": "hundred", "jobs": [{", ".join(members)}]}}'
        assert refused(await post(app, "/api/v1/batches", body), 422) == ["jobs.57.payload.text"]
        name = await post(
            app, "/api/v1/batches", '{"name": "n\\u0000", "jobs": [' + members[0] + "]}"
        )
        assert refused(name, 422) == ["name"]
        surrogate = members[:]
        surrogate[3] = text_job("\\ud800")
        body = f'{{"jobs": [{", ".join(surrogate)}]}}'
        refused(await post(app, "/api/v1/batches", body), 400)
        assert await stored() == before
        assert await collection.count_documents({}) == 0
        assert await batches.count_documents({}) == 0


async def test_the_url_and_headers_are_checked_too(
    app_factory: AppFactory, broker: Broker, stored: Any
) -> None:
    async with app_factory(relay_enabled=False) as app:
        before = await stored()
        keyed = await app.client.post(
            "/api/v1/jobs",
            json=EMAIL_JOB,
            headers=[*app.headers().items(), ("Idempotency-Key", "key\x00nul")],
        )
        assert refused(keyed, 422) == ["Idempotency-Key"]
        status = await app.client.get("/api/v1/jobs/a%00b/status", headers=app.headers())
        assert refused(status, 422) == ["path"]
        listing = await app.client.get("/api/v1/job-types?x=%ED%A0%80", headers=app.headers())
        assert refused(listing, 400) == ["x"]
        assert await stored() == before


async def test_the_payload_check_for_the_dashboard_refuses_them(
    app_factory: AppFactory, broker: Broker
) -> None:
    async with app_factory(relay_enabled=False) as app:
        await with_types(app, broker)
        path = "/internal/v1/job-types/acme.text/check"
        assert refused(await post(app, path, '{"payload": {"text": "\\u0000"}}'), 422) == [
            "payload.text"
        ]
        refused(await post(app, path, '{"payload": {"text": "\\ud800"}}'), 400)
        fine = await post(app, path, '{"payload": {"text": "fine"}}')
        assert fine.status_code == 200, fine.text
