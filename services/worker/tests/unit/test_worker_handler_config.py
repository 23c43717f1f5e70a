"""The built-in handlers' own configuration: read from the same WORKER_* variables as before,
checked when the worker loads them, and handed to the handler as ``ctx.config``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jobs_sdk import spec_of
from jobs_worker.app.handler_loading import HandlerLoadError, handler_configs, load_handlers
from jobs_worker.handlers import email, image_resize, report_generation
from jobs_worker.handlers.config import EmailConfig, ImageConfig, ReportConfig

pytestmark = pytest.mark.unit


def test_email_config_reads_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_SMTP_STARTTLS", "true")
    monkeypatch.setenv("WORKER_SMTP_PORT", "2525")
    monkeypatch.setenv("WORKER_EMAIL_ALLOWED_RECIPIENTS", "example.org, boss@example.com")
    config = EmailConfig.from_env()
    assert (config.smtp_starttls, config.smtp_port) == (True, 2525)
    assert config.email_allowed_recipients == ["example.org", "boss@example.com"]


def test_smtp_credentials_come_in_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_SMTP_USERNAME", "user")
    with pytest.raises(ValidationError):
        EmailConfig.from_env()


def test_each_builtin_handler_declares_its_config() -> None:
    declared = {
        module.__name__.rpartition(".")[2]: spec.config_model
        for module in (email, image_resize, report_generation)
        if (spec := spec_of(module.run)) is not None
    }
    assert declared == {
        "email": EmailConfig,
        "image_resize": ImageConfig,
        "report_generation": ReportConfig,
    }


def test_a_bad_value_stops_the_worker_at_load_naming_the_handler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handlers = load_handlers(["jobs_worker.handlers.email"], entry_point_group=None)
    monkeypatch.setenv("WORKER_SMTP_PORT", "not-a-port")
    with pytest.raises(HandlerLoadError, match=r"'email' \(EmailConfig, variables WORKER_\*\)"):
        handler_configs(handlers.registry)
    monkeypatch.setenv("WORKER_SMTP_PORT", "25")
    assert handler_configs(handlers.registry)["email"].smtp_port == 25
