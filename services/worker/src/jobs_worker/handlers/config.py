"""The built-in handlers' own configuration, read from the same ``WORKER_*`` variables as
before they became ordinary handlers: each handler declares what it reads
(``@handler(config=...)``), so no handler is handed the worker's settings."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, model_validator

from jobs_common.recipients import RecipientList
from jobs_common.settings import PostgresUrl
from jobs_sdk import HandlerConfig


class ArtifactsConfig(HandlerConfig, env_prefix="WORKER_"):
    # Where handlers write files too large for a result (reports, resized images).
    artifacts_dir: Path = Path("var/artifacts")


class ImageConfig(ArtifactsConfig):
    max_image_pixels: int = Field(default=40_000_000, ge=1)


class ReportConfig(ArtifactsConfig):
    # A report up to this many bytes is the job's result; a larger one an artifact file.
    report_inline_limit: int = Field(default=64 * 1024, ge=0)


class JobStoreConfig(HandlerConfig, env_prefix="WORKER_"):
    """The job store the report handler reads (read-only)."""

    database_url: PostgresUrl = Field(
        default="postgresql+asyncpg://postgres@127.0.0.1:5432/jobs", repr=False
    )
    db_pool_size: int = Field(default=2, ge=1)


class EmailConfig(HandlerConfig, env_prefix="WORKER_"):
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 1025
    smtp_from: str = "jobs@localhost"
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    smtp_starttls: bool = False
    smtp_timeout: float = Field(default=10.0, gt=0)
    # Recipients the email handler may send to: addresses and/or domains, comma-separated
    # (jobs_common.recipients); empty allows all. Anyone else fails the job, not retried.
    email_allowed_recipients: RecipientList = []

    @model_validator(mode="after")
    def _credentials_in_pairs(self) -> EmailConfig:
        if (self.smtp_username is None) != (self.smtp_password is None):
            raise ValueError("smtp_username and smtp_password must be set together")
        return self
