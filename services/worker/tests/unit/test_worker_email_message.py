"""Building the email: headers that tie it to the job; SMTP failure classification."""

from __future__ import annotations

import smtplib
import uuid

import pytest

from jobs_sdk.errors import PermanentJobError, RetryableJobError, classify
from jobs_worker.adapters.smtp import smtp_failure
from jobs_worker.handlers.email import build_message, message_id_for
from jobs_worker.handlers.payloads import EmailPayload

pytestmark = pytest.mark.unit

JOB = uuid.UUID("12345678-1234-5678-1234-567812345678")


def test_message_headers_and_body() -> None:
    payload = EmailPayload(to="someone@example.com", subject="Hello", body="Body text")
    message = build_message(payload, job_id=JOB, attempt=3, sender="jobs@example.org")
    assert message["To"] == "someone@example.com"
    assert message["From"] == "jobs@example.org"
    assert message["Subject"] == "Hello"
    assert message["X-Job-Id"] == str(JOB)
    assert message["X-Job-Attempt"] == "3"
    assert message["Message-ID"] == f"<job-{JOB}@example.org>"
    assert message["Date"]
    assert message.get_content().strip() == "Body text"


def test_message_id_is_stable_across_attempts() -> None:
    assert message_id_for(JOB, "a@b.c") == message_id_for(JOB, "a@b.c")
    assert message_id_for(JOB, "no-domain") == f"<job-{JOB}@no-domain>"
    assert str(JOB) in message_id_for(JOB, "x@y")


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ConnectionRefusedError(111, "refused"), "retryable"),
        (TimeoutError("timed out"), "retryable"),
        (smtplib.SMTPServerDisconnected("gone"), "retryable"),
        (smtplib.SMTPRecipientsRefused({"a@b.c": (550, b"no such user")}), "permanent"),
        (smtplib.SMTPRecipientsRefused({"a@b.c": (451, b"try later")}), "retryable"),
        (smtplib.SMTPSenderRefused(553, b"bad sender", "x@y"), "permanent"),
        (smtplib.SMTPDataError(452, b"insufficient storage"), "retryable"),
        (smtplib.SMTPAuthenticationError(535, b"bad credentials"), "permanent"),
        (smtplib.SMTPNotSupportedError("no STARTTLS"), "permanent"),
    ],
)
def test_smtp_failure_classification(exc: BaseException, kind: str) -> None:
    failure = smtp_failure(exc)
    assert failure.kind is kind
    assert failure.error_class == type(exc).__name__
    assert classify(failure).kind is kind


def test_recipient_refusal_message_names_the_recipient() -> None:
    failure = smtp_failure(smtplib.SMTPRecipientsRefused({"a@b.c": (550, b"no such user")}))
    assert isinstance(failure, PermanentJobError)
    assert "a@b.c" in failure.message and "550" in failure.message
    assert isinstance(smtp_failure(OSError("network down")), RetryableJobError)
