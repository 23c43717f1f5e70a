"""Payload schema of each built-in job type: validated at submission, parsed by the worker.

Adding a job type means adding its model to :data:`PAYLOAD_MODELS` and a handler in the worker.

Every payload is bounded: its JSON at most :attr:`Payload.max_json_bytes` (256 KB; an image's
own bound for image_resize), each free-text field by its length, and a field that ends up in
an SMTP header (:data:`HeaderText`) refuses control characters, so no value can add a header.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, ClassVar, Literal

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    EmailStr,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_BASE64_CHARS = (MAX_IMAGE_BYTES * 4) // 3 + 4
MAX_PAYLOAD_BYTES = 256 * 1024
MAX_SUBJECT_CHARS = 200
MAX_EMAIL_BODY_CHARS = 100_000
MAX_ADDRESS_CHARS = 320  # RFC 3696 erratum: 64 + 1 + 255 (the address itself: at most 254)

# C0 controls (CR, LF, TAB, NUL...), DEL, C1 controls (NEL), the Unicode line separators.
_HEADER_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# A body keeps its line breaks and tabs; other C0 controls (NUL, ESC...) are refused.
_BODY_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def header_safe(value: Any) -> Any:
    """Refuse a string with a control character or line break (it would end an SMTP or HTTP
    header line and start another)."""
    if isinstance(value, str) and _HEADER_UNSAFE.search(value):
        raise PydanticCustomError(
            "control_character", "must not contain control characters or line breaks"
        )
    return value


def body_safe(value: str) -> str:
    if _BODY_UNSAFE.search(value):
        raise PydanticCustomError(
            "control_character", "must not contain control characters other than line breaks"
        )
    return value


HeaderText = Annotated[str, AfterValidator(header_safe)]
"""A string that may end up in a message header: no control characters, no line breaks."""


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    try:
        return len(orjson.dumps(value, default=str))
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits
        return len(json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":")))


_IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "png",
    b"\xff\xd8\xff": "jpeg",
}


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    max_json_bytes: ClassVar[int] = MAX_PAYLOAD_BYTES
    """The payload's JSON may not be larger (checked before any field)."""

    @model_validator(mode="before")
    @classmethod
    def _bounded_json(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            size = json_size(data)
            if size > cls.max_json_bytes:
                raise PydanticCustomError(
                    "payload_too_large",
                    "payload is {size} bytes of JSON; at most {limit} bytes",
                    {"size": size, "limit": cls.max_json_bytes},
                )
        return data


class EmailPayload(Payload):
    to: Annotated[EmailStr, BeforeValidator(header_safe)] = Field(
        max_length=MAX_ADDRESS_CHARS, description="One address; no display name."
    )
    subject: HeaderText = Field(min_length=1, max_length=MAX_SUBJECT_CHARS)
    body: Annotated[str, AfterValidator(body_safe)] = Field(max_length=MAX_EMAIL_BODY_CHARS)


def sniff_image_format(data: bytes) -> str | None:
    for magic, name in _IMAGE_MAGIC.items():
        if data.startswith(magic):
            return name
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


class ImageResizePayload(Payload):
    max_json_bytes: ClassVar[int] = MAX_IMAGE_BASE64_CHARS + 4 * 1024

    image_base64: str = Field(alias="imageBase64", min_length=1)
    width: int = Field(ge=1, le=10_000)
    height: int = Field(ge=1, le=10_000)
    format: Literal["png", "jpeg", "webp"] | None = None

    @field_validator("image_base64")
    @classmethod
    def _png_jpeg_or_webp_up_to_5_mb(cls, value: str) -> str:
        if len(value) > MAX_IMAGE_BASE64_CHARS:
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
    a coin. Every knob is optional and it fails only when asked to: both failure rates default
    to 0 (``{}`` runs 1-4 s and succeeds); ``seed`` makes the outcome deterministic."""

    immediate_failure_rate: float = Field(default=0.0, ge=0, le=1, alias="immediateFailureRate")
    failure_rate: float = Field(default=0.0, ge=0, le=1, alias="failureRate")
    min_seconds: float = Field(default=1.0, ge=0, le=300, alias="minSeconds")
    max_seconds: float = Field(default=4.0, ge=0, le=300, alias="maxSeconds")
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)

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
