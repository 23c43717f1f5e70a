"""Sending one message over SMTP with smtplib (blocking: call it in a thread), and the
classification of SMTP failures into retryable and permanent job errors."""

from __future__ import annotations

import smtplib
from dataclasses import dataclass
from email.message import EmailMessage

from jobs_sdk.errors import JobFailure, PermanentJobError, RetryableJobError


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    timeout: float
    starttls: bool = False
    username: str | None = None
    password: str | None = None


def send_message(config: SmtpConfig, message: EmailMessage) -> None:
    """Deliver ``message`` to the SMTP server; raises a :class:`JobFailure` on failure."""
    try:
        with smtplib.SMTP(config.host, config.port, timeout=config.timeout) as client:
            if config.starttls:
                client.starttls()
            if config.username is not None and config.password is not None:
                client.login(config.username, config.password)
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:
        raise smtp_failure(exc) from exc
    if refused:
        raise smtp_failure(smtplib.SMTPRecipientsRefused(refused))


def _by_code(code: int, exc: BaseException, text: str) -> JobFailure:
    error_class = type(exc).__name__
    if 500 <= code < 600:
        return PermanentJobError(f"{code} {text}", error_class=error_class)
    return RetryableJobError(f"{code} {text}", error_class=error_class)


def _text(raw: bytes | str) -> str:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else raw


def smtp_failure(exc: BaseException) -> JobFailure:
    """5xx replies are permanent (the server will say the same again); 4xx replies,
    refused connections, timeouts and dropped connections are retryable."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        detail = "; ".join(
            f"{rcpt}: {code} {_text(msg)}" for rcpt, (code, msg) in exc.recipients.items()
        )
        if codes and all(500 <= code < 600 for code in codes):
            return PermanentJobError(f"recipient refused: {detail}", error_class=type(exc).__name__)
        return RetryableJobError(f"recipient refused: {detail}", error_class=type(exc).__name__)
    if isinstance(exc, smtplib.SMTPResponseException):
        return _by_code(exc.smtp_code, exc, _text(exc.smtp_error))
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        return PermanentJobError(str(exc), error_class=type(exc).__name__)
    return RetryableJobError(str(exc) or type(exc).__name__, error_class=type(exc).__name__)
