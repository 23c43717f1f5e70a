"""email: send one message through SMTP. Result ``{messageId, to, acceptedAt}``."""

from __future__ import annotations

import asyncio
import uuid
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from jobs_common.contracts import utcnow
from jobs_common.recipients import NOT_ALLOWED, RecipientAllowList
from jobs_sdk.errors import PermanentJobError
from jobs_worker.adapters.smtp import SmtpConfig, send_message
from jobs_worker.handlers.config import EmailConfig
from jobs_worker.handlers.payloads import EmailPayload
from jobs_worker.sdk import JobContext, handler


def message_id_for(job_id: uuid.UUID, sender: str) -> str:
    """Stable across attempts, so a receiver can drop a duplicate of a retried send."""
    domain = sender.rpartition("@")[2] or "jobs.local"
    return f"<job-{job_id}@{domain}>"


def build_message(
    payload: EmailPayload, *, job_id: uuid.UUID, attempt: int, sender: str
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = str(payload.to)
    message["Subject"] = payload.subject
    message["Date"] = format_datetime(utcnow())
    message["Message-ID"] = message_id_for(job_id, sender)
    message["X-Job-Id"] = str(job_id)
    message["X-Job-Attempt"] = str(attempt)
    message.set_content(payload.body)
    return message


def smtp_config(settings: EmailConfig) -> SmtpConfig:
    return SmtpConfig(
        host=settings.smtp_host,
        port=settings.smtp_port,
        timeout=settings.smtp_timeout,
        starttls=settings.smtp_starttls,
        username=settings.smtp_username,
        password=settings.smtp_password.get_secret_value() if settings.smtp_password else None,
    )


def check_recipient(settings: EmailConfig, recipient: str) -> None:
    """Refuse a recipient outside WORKER_EMAIL_ALLOWED_RECIPIENTS (when it is set): a permanent
    failure, since the same job would be refused again. The submission service refuses such
    jobs already; this holds for jobs accepted before the list changed, schedules and edited
    requeues too."""
    if not RecipientAllowList.of(settings.email_allowed_recipients).allows(recipient):
        raise PermanentJobError(f"{recipient}: {NOT_ALLOWED}", error_class="RecipientNotAllowed")


@handler("email", payload=EmailPayload, config=EmailConfig)
async def run(ctx: JobContext, payload: EmailPayload) -> dict[str, Any]:
    settings: EmailConfig = ctx.config
    check_recipient(settings, str(payload.to))
    message = build_message(
        payload, job_id=ctx.job_id, attempt=ctx.attempt, sender=settings.smtp_from
    )
    config = smtp_config(settings)
    ctx.log.info(
        "connecting to smtp %s:%s%s",
        config.host,
        config.port,
        " (STARTTLS)" if config.starttls else "",
    )
    await asyncio.to_thread(send_message, config, message)
    accepted_at = utcnow()
    ctx.log.info(
        "sent %s to %s",
        message["Message-ID"],
        payload.to,
        extra={"action": "email_sent"},
    )
    return {
        "messageId": message["Message-ID"],
        "to": str(payload.to),
        "acceptedAt": accepted_at.isoformat(),
    }
