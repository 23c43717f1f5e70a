"""The payload models of the built-in job types: their one definition.

The worker announces their JSON Schemas on ``jobs.types`` like any team's handler; the
submission service, the dashboard and the web console read them from the type registry. So
every check a submission must make is written into the schema: bounds, enums, and patterns
(no control character in what ends up in an SMTP header; base64 of a PNG, JPEG or WebP), and
``x-max-payload-bytes`` where a type's payload may be larger than the platform's 256 KiB. The
checks a schema cannot say (``minSeconds`` not above ``maxSeconds``, ``from`` not after
``to``, an address email-validator accepts) run here, when the worker parses the payload: a
payload that fails them fails its job at once, without a retry.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, ClassVar, Literal

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
from pydantic.json_schema import JsonSchemaValue as JsonDict
from pydantic_core import PydanticCustomError

from jobs_common.payloads import (
    MAX_PAYLOAD_BYTES,
    MAX_PAYLOAD_BYTES_KEYWORD,
    ORDERED_KEYWORD,
    header_safe,
    json_size,
)

MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_BASE64_CHARS = (MAX_IMAGE_BYTES * 4) // 3 + 4
MAX_SUBJECT_CHARS = 200
MAX_EMAIL_BODY_CHARS = 100_000
MAX_ADDRESS_CHARS = 320  # RFC 3696 erratum: 64 + 1 + 255 (the address itself: at most 254)

# JSON Schema patterns (ECMA-262 syntax, read alike by Python, Rust and the browser).
HEADER_SAFE_PATTERN = r"^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$"
BODY_SAFE_PATTERN = r"^[^\u0000-\u0008\u000b\u000c\u000e-\u001f]*$"
ADDRESS_PATTERN = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# Base64 whose first bytes are a PNG, JPEG or WebP signature (see sniff_image_format).
PATTERN_MESSAGE = "x-pattern-message"  # read by the submission service
HEADER_SAFE_MESSAGE = "must not contain control characters or line breaks"
IMAGE_BASE64_PATTERN = (
    r"^(?:/9j/|iVBORw0KGg[o-r][A-Za-z0-9+/]|UklGR[g-v][A-Za-z0-9+/]{4}[BFJNRVZdhlptx159]XRUJQ)"
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
)

_BODY_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
_IMAGE_MAGIC = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpeg"}


def body_safe(value: str) -> str:
    """A body keeps its line breaks and tabs; other C0 controls (NUL, ESC...) are refused."""
    if _BODY_UNSAFE.search(value):
        raise PydanticCustomError(
            "control_character", "must not contain control characters other than line breaks"
        )
    return value


def sniff_image_format(data: bytes) -> str | None:
    for magic, name in _IMAGE_MAGIC.items():
        if data.startswith(magic):
            return name
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _pattern(pattern: str, message: str | None = None) -> JsonDict:
    """``pattern`` in the schema, with the message a submission that misses it gets."""
    return (
        {"pattern": pattern} if message is None else {"pattern": pattern, PATTERN_MESSAGE: message}
    )


class Payload(BaseModel):
    """Frozen, no unknown field, and bounded: its JSON at most :attr:`max_json_bytes`,
    checked before any field and announced in the schema as ``x-max-payload-bytes``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    max_json_bytes: ClassVar[int] = MAX_PAYLOAD_BYTES
    # (lower, upper, message) by alias: announced as x-ordered, so the submission refuses
    # what the model's own validator would (the worker still checks it).
    ordered: ClassVar[tuple[tuple[str, str, str], ...]] = ()

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> JsonDict:
        schema: JsonDict = handler(core_schema)
        schema = handler.resolve_ref_schema(schema)
        if cls.max_json_bytes != MAX_PAYLOAD_BYTES:
            schema[MAX_PAYLOAD_BYTES_KEYWORD] = cls.max_json_bytes
        if cls.ordered:
            schema[ORDERED_KEYWORD] = [
                {"lower": lower, "upper": upper, "message": message}
                for lower, upper, message in cls.ordered
            ]
        return schema

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
    """One plain-text message through the platform's SMTP relay."""

    model_config = ConfigDict(title="Email")

    to: Annotated[EmailStr, BeforeValidator(header_safe)] = Field(
        max_length=MAX_ADDRESS_CHARS,
        title="To",
        description="One address; no display name.",
        examples=["someone@example.com"],
        json_schema_extra=_pattern(ADDRESS_PATTERN, "must be one email address, no display name"),
    )
    subject: Annotated[str, AfterValidator(header_safe)] = Field(
        min_length=1,
        max_length=MAX_SUBJECT_CHARS,
        title="Subject",
        description="One line: no line breaks or control characters.",
        json_schema_extra=_pattern(HEADER_SAFE_PATTERN, HEADER_SAFE_MESSAGE),
    )
    body: Annotated[str, AfterValidator(body_safe)] = Field(
        max_length=MAX_EMAIL_BODY_CHARS,
        title="Body",
        description="Plain text; line breaks and tabs are kept.",
        json_schema_extra=_pattern(
            BODY_SAFE_PATTERN, "must not contain control characters other than line breaks"
        ),
    )


class ImageResizePayload(Payload):
    """Resize an image to exactly width x height; the result is an artifact file."""

    model_config = ConfigDict(title="Image resize")
    max_json_bytes: ClassVar[int] = MAX_IMAGE_BASE64_CHARS + 4 * 1024

    image_base64: str = Field(
        alias="imageBase64",
        min_length=1,
        max_length=MAX_IMAGE_BASE64_CHARS,
        title="Image",
        description="PNG, JPEG or WebP, base64-encoded; at most 5 MB.",
        json_schema_extra={
            **_pattern(IMAGE_BASE64_PATTERN, "must be a PNG, JPEG or WebP image in base64"),
            "contentEncoding": "base64",
        },
    )
    width: int = Field(ge=1, le=10_000, title="Width", description="Pixels.")
    height: int = Field(ge=1, le=10_000, title="Height", description="Pixels.")
    format: Literal["png", "jpeg", "webp"] | None = Field(
        default=None, title="Output format", description="Default: the source image's."
    )

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
    """A summary of the project's jobs (by status, type and priority)."""

    model_config = ConfigDict(title="Report generation")

    report_type: Literal["jobs_summary"] = Field(alias="reportType", title="Report")
    from_: date | None = Field(
        default=None,
        alias="from",
        title="From",
        description="First day (UTC) of the jobs counted; empty: from the first.",
        json_schema_extra=_pattern(DATE_PATTERN, "must be a date, YYYY-MM-DD"),
    )
    to: date | None = Field(
        default=None,
        title="To",
        description="Last day (UTC), not before From; empty: up to now.",
        json_schema_extra=_pattern(DATE_PATTERN, "must be a date, YYYY-MM-DD"),
    )
    format: Literal["csv", "json"] = Field(title="Format")

    ordered = (("from", "to", "'from' must not be after 'to'"),)

    @model_validator(mode="after")
    def _ordered_range(self) -> ReportPayload:
        if self.from_ and self.to and self.from_ > self.to:
            raise ValueError(self.ordered[0][2])
        return self


class SimulatePayload(Payload):
    """Demo work, as in the reference pipeline: maybe fail at once, else run a while then flip
    a coin. Every knob is optional and it fails only when asked to: both failure rates default
    to 0 (``{}`` runs 1-4 s and succeeds); ``seed`` makes the outcome deterministic."""

    model_config = ConfigDict(title="Simulate")

    immediate_failure_rate: float = Field(
        default=0.0,
        ge=0,
        le=1,
        alias="immediateFailureRate",
        title="Immediate failure rate",
        description="Chance (0-1) that an attempt fails before it starts working.",
    )
    failure_rate: float = Field(
        default=0.0,
        ge=0,
        le=1,
        alias="failureRate",
        title="Failure rate",
        description="Chance (0-1) that an attempt fails after working.",
    )
    min_seconds: float = Field(
        default=1.0, ge=0, le=300, alias="minSeconds", title="Min seconds", description="At least."
    )
    max_seconds: float = Field(
        default=4.0,
        ge=0,
        le=300,
        alias="maxSeconds",
        title="Max seconds",
        description="At most; not below Min seconds.",
    )
    seed: int | None = Field(
        default=None,
        ge=-(2**63),
        le=2**63 - 1,
        title="Seed",
        description="Makes the outcome the same every time.",
    )

    ordered = (("minSeconds", "maxSeconds", "minSeconds must not exceed maxSeconds"),)

    @model_validator(mode="after")
    def _ordered_durations(self) -> SimulatePayload:
        if self.min_seconds > self.max_seconds:
            raise ValueError(self.ordered[0][2])
        return self
