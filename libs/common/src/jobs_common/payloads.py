"""Payload schema of each built-in job type: validated at submission, parsed by the worker.

Adding a job type means adding its model to :data:`PAYLOAD_MODELS` and a handler in the worker.
"""

from __future__ import annotations

import base64
import binascii
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field, field_validator, model_validator

MAX_IMAGE_BYTES = 5 * 1024 * 1024
_IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "png",
    b"\xff\xd8\xff": "jpeg",
}


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class EmailPayload(Payload):
    to: EmailStr
    subject: str = Field(min_length=1, max_length=200)
    body: str


def sniff_image_format(data: bytes) -> str | None:
    for magic, name in _IMAGE_MAGIC.items():
        if data.startswith(magic):
            return name
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


class ImageResizePayload(Payload):
    image_base64: str = Field(alias="imageBase64", min_length=1)
    width: int = Field(ge=1, le=10_000)
    height: int = Field(ge=1, le=10_000)
    format: Literal["png", "jpeg", "webp"] | None = None

    @field_validator("image_base64")
    @classmethod
    def _png_jpeg_or_webp_up_to_5_mb(cls, value: str) -> str:
        if len(value) > (MAX_IMAGE_BYTES * 4) // 3 + 4:
            raise ValueError("image must be at most 5 MB")
        try:
            data = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError("imageBase64 is not valid base64") from exc
        if len(data) > MAX_IMAGE_BYTES:
            raise ValueError("image must be at most 5 MB")
        if sniff_image_format(data) is None:
            raise ValueError("image must be PNG, JPEG or WebP")
        return value

    def image_bytes(self) -> bytes:
        return base64.b64decode(self.image_base64)


class ReportPayload(Payload):
    report_type: Literal["jobs_summary"] = Field(alias="reportType")
    from_: date | None = Field(default=None, alias="from")
    to: date | None = None
    format: Literal["csv", "json"]

    @model_validator(mode="after")
    def _ordered_range(self) -> ReportPayload:
        if self.from_ and self.to and self.from_ > self.to:
            raise ValueError("'from' must not be after 'to'")
        return self


class SimulatePayload(Payload):
    """Demo work, as in the reference pipeline: maybe fail at once, else run a while then flip
    a coin. Every knob is optional; ``seed`` makes the outcome deterministic for tests."""

    immediate_failure_rate: float = Field(default=0.2, ge=0, le=1, alias="immediateFailureRate")
    failure_rate: float = Field(default=0.5, ge=0, le=1, alias="failureRate")
    min_seconds: float = Field(default=1.0, ge=0, le=300, alias="minSeconds")
    max_seconds: float = Field(default=4.0, ge=0, le=300, alias="maxSeconds")
    seed: int | None = None

    @model_validator(mode="after")
    def _ordered_durations(self) -> SimulatePayload:
        if self.min_seconds > self.max_seconds:
            raise ValueError("minSeconds must not exceed maxSeconds")
        return self


PAYLOAD_MODELS: dict[str, type[Payload]] = {
    "email": EmailPayload,
    "image_resize": ImageResizePayload,
    "report_generation": ReportPayload,
    "simulate": SimulatePayload,
}

JOB_TYPES = tuple(PAYLOAD_MODELS)


def parse_payload(job_type: str, payload: dict[str, Any]) -> Payload:
    """Validate ``payload`` for ``job_type``; raises KeyError (unknown type) or ValidationError."""
    return PAYLOAD_MODELS[job_type].model_validate(payload)
