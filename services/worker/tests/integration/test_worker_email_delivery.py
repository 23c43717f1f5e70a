"""email jobs through a real SMTP server (the smtp_sink fixture) and a closed port."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jobs_common.contracts import ErrorKind
from jobs_common.topology import RESULTS
from jobs_testing.infra import free_port
from jobs_testing.plugin import SmtpSink
from jobs_testing.worker_messages import Observer, make_dispatch

pytestmark = pytest.mark.integration

PAYLOAD = {"to": "someone@example.com", "subject": "Report ready", "body": "Hello there"}


async def test_email_arrives_at_the_smtp_server(
    start_worker: Any, observer: Observer, smtp_sink: SmtpSink
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(
        smtp_host=smtp_sink.host, smtp_port=smtp_sink.port, smtp_from="jobs@example.org"
    )
    dispatch = make_dispatch("email", PAYLOAD)
    await observer.publish(dispatch)

    async with asyncio.timeout(20):
        message = await smtp_sink.wait_for(lambda m: m["X-Job-Id"] == str(dispatch.job_id))
    assert message["To"] == "someone@example.com"
    assert message["Subject"] == "Report ready"
    assert message["Message-ID"] == f"<job-{dispatch.job_id}@example.org>"
    assert message.get_payload(decode=True).decode().strip() == "Hello there"

    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "succeeded"
    assert result.result is not None
    assert result.result["messageId"] == message["Message-ID"]
    assert result.result["to"] == "someone@example.com"
    assert result.result["acceptedAt"]


async def test_unreachable_smtp_server_is_retryable(start_worker: Any, observer: Observer) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(smtp_port=free_port(), smtp_timeout=2)
    dispatch = make_dispatch("email", PAYLOAD)
    await observer.publish(dispatch)
    result = await observer.wait_result(results, dispatch.job_id)
    assert result.outcome == "failed"
    assert result.error is not None
    assert result.error.kind is ErrorKind.RETRYABLE
    assert result.error.error_class == "ConnectionRefusedError"


async def test_a_recipient_outside_the_allow_list_is_refused_for_good(
    start_worker: Any, observer: Observer, smtp_sink: SmtpSink
) -> None:
    results = await observer.collect(RESULTS)
    await start_worker(
        smtp_host=smtp_sink.host,
        smtp_port=smtp_sink.port,
        email_allowed_recipients=["example.org", "boss@example.com"],
    )
    refused = make_dispatch("email", PAYLOAD)  # someone@example.com: neither entry
    by_domain = make_dispatch("email", {**PAYLOAD, "to": "team@EXAMPLE.org"})
    by_address = make_dispatch("email", {**PAYLOAD, "to": "boss@example.com"})
    for dispatch in (refused, by_domain, by_address):
        await observer.publish(dispatch)

    outcome = await observer.wait_result(results, refused.job_id)
    assert outcome.outcome == "failed"
    assert outcome.error is not None
    assert (outcome.error.kind, outcome.error.error_class) == (
        ErrorKind.PERMANENT,
        "RecipientNotAllowed",
    )
    for allowed in (by_domain, by_address):
        assert (await observer.wait_result(results, allowed.job_id)).outcome == "succeeded"
    # Every result is in: whatever was sent has arrived. The refused job sent nothing.
    sent_for = {message["X-Job-Id"] for message in smtp_sink.messages}
    assert sent_for == {str(by_domain.job_id), str(by_address.job_id)}
