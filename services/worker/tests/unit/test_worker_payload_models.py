"""The built-in types' payload models (their one definition): the JSON size of every type,
free-text lengths, no control characters in what becomes an SMTP header, and the same checks
in the JSON Schema the worker announces, which is what a submission is checked against."""

from __future__ import annotations

import base64
import io
from typing import Any

import jsonschema_rs
import pytest
from PIL import Image
from pydantic import ValidationError

from jobs_common.body_limit import JOB_MAX_BODY_BYTES
from jobs_common.payloads import MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES_KEYWORD, json_size
from jobs_worker.handlers.payloads import (
    MAX_EMAIL_BODY_CHARS,
    MAX_IMAGE_BYTES,
    EmailPayload,
    ImageResizePayload,
    Payload,
    ReportPayload,
    SimulatePayload,
)

pytestmark = pytest.mark.unit


def errors(model: Any, data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return [(".".join(map(str, e["loc"])), e["type"]) for e in caught.value.errors()]


def schema_of(model: type[Payload]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def schema_allows(model: type[Payload], data: dict[str, Any]) -> bool:
    """What a submission decides: the announced schema, compiled as the submission does."""
    return bool(jsonschema_rs.validator_for(schema_of(model)).is_valid(data))


def email(**fields: Any) -> dict[str, Any]:
    return {"to": "a@example.com", "subject": "hello", "body": "hi", **fields}


@pytest.mark.parametrize(
    "subject",
    [
        "hi\r\nBcc: victim@example.com",
        "hi\nBcc: victim@example.com",
        "hi\rthere",
        "nul\x00",
        "tab\there",
        "bell\x07",
        "del\x7f",
        "next line\x85",
        "line\u2028separator",
        "paragraph\u2029separator",
    ],
)
def test_a_subject_refuses_every_control_character(subject: str) -> None:
    assert errors(EmailPayload, email(subject=subject)) == [("subject", "control_character")]
    assert not schema_allows(EmailPayload, email(subject=subject))


def test_a_recipient_refuses_control_characters_and_extra_addresses() -> None:
    assert errors(EmailPayload, email(to="a@example.com\r\nBcc: b@example.com")) == [
        ("to", "control_character")
    ]
    assert errors(EmailPayload, email(to="Name\x01 <a@example.com>")) == [
        ("to", "control_character")
    ]
    assert errors(EmailPayload, email(to="a@example.com, b@example.com"))[0][0] == "to"
    for to in ("a@example.com\r\nBcc: b@example.com", "a@example.com, b@example.com", "nope"):
        assert not schema_allows(EmailPayload, email(to=to))
    assert schema_allows(EmailPayload, email(to="someone@example.com"))


def test_a_body_keeps_its_line_breaks_within_its_length() -> None:
    body = "Dear you,\r\n\n\tindented\n" * 10
    assert EmailPayload.model_validate(email(body=body)).body == body
    assert errors(EmailPayload, email(body="nul\x00")) == [("body", "control_character")]
    assert errors(EmailPayload, email(body="esc\x1b[0m")) == [("body", "control_character")]
    assert errors(EmailPayload, email(body="x" * (MAX_EMAIL_BODY_CHARS + 1))) == [
        ("body", "string_too_long")
    ]
    assert errors(EmailPayload, email(subject="s" * 201)) == [("subject", "string_too_long")]
    assert schema_allows(EmailPayload, email(body=body))
    for bad in ("nul\x00", "esc\x1b[0m", "x" * (MAX_EMAIL_BODY_CHARS + 1)):
        assert not schema_allows(EmailPayload, email(body=bad))


@pytest.mark.parametrize("model", [EmailPayload, ReportPayload, SimulatePayload])
def test_every_payload_is_bounded_as_json(model: type[Payload]) -> None:
    oversized = {"padding": "x" * MAX_PAYLOAD_BYTES}
    assert errors(model, oversized) == [("", "payload_too_large")]
    assert MAX_PAYLOAD_BYTES_KEYWORD not in schema_of(model)  # the platform's bound


def test_an_image_payload_is_bounded_by_its_image() -> None:
    assert ImageResizePayload.max_json_bytes > MAX_PAYLOAD_BYTES
    oversized = {"width": 1, "height": 1, "imageBase64": "A" * ImageResizePayload.max_json_bytes}
    assert errors(ImageResizePayload, oversized) == [("", "payload_too_large")]
    # announced with the schema, and a largest image job fits the job body limit
    assert schema_of(ImageResizePayload)[MAX_PAYLOAD_BYTES_KEYWORD] == (
        ImageResizePayload.max_json_bytes
    )
    assert ImageResizePayload.max_json_bytes >= MAX_IMAGE_BYTES * 4 // 3
    assert JOB_MAX_BODY_BYTES >= ImageResizePayload.max_json_bytes + 64 * 1024


def test_a_seed_is_a_64_bit_integer() -> None:
    assert SimulatePayload.model_validate({"seed": -(2**63)}).seed == -(2**63)
    assert errors(SimulatePayload, {"seed": 2**63}) == [("seed", "less_than_equal")]


def test_json_size_counts_utf8_bytes_even_beyond_orjson() -> None:  # jobs_common.payloads
    assert json_size({"a": "é"}) == len('{"a":"é"}'.encode())
    assert json_size({"n": 2**70}) == len('{"n":1180591620717411303424}')


def image(fmt: str) -> str:
    out = io.BytesIO()
    Image.new("RGB", (3, 2)).save(out, format=fmt)
    return base64.b64encode(out.getvalue()).decode()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_an_image_schema_takes_png_jpeg_and_webp_as_the_model_does(fmt: str) -> None:
    payload = {"imageBase64": image(fmt), "width": 1, "height": 1}
    assert ImageResizePayload.model_validate(payload).image_bytes()
    assert schema_allows(ImageResizePayload, payload)


@pytest.mark.parametrize(
    "encoded",
    [
        base64.b64encode(b"GIF89a" + b"\0" * 20).decode(),  # not PNG, JPEG or WebP
        image("PNG")[:-2],  # cut: not base64
        "@@@@",
    ],
)
def test_an_image_schema_refuses_what_the_model_refuses(encoded: str) -> None:
    payload = {"imageBase64": encoded, "width": 1, "height": 1}
    assert errors(ImageResizePayload, payload)[0][0] == "imageBase64"
    assert not schema_allows(ImageResizePayload, payload)


def test_report_and_simulate_schemas_carry_their_field_checks() -> None:
    assert schema_allows(ReportPayload, {"reportType": "jobs_summary", "format": "csv"})
    assert not schema_allows(ReportPayload, {"reportType": "jobs_summary", "format": "xml"})
    assert not schema_allows(
        ReportPayload, {"reportType": "jobs_summary", "format": "csv", "from": "May 1st"}
    )
    assert not schema_allows(SimulatePayload, {"failureRate": 2})
    assert not schema_allows(SimulatePayload, {"seed": 2**63})
    # what a schema cannot say is checked when the worker parses the payload
    assert schema_allows(SimulatePayload, {"minSeconds": 5, "maxSeconds": 1})
    with pytest.raises(ValidationError):
        SimulatePayload.model_validate({"minSeconds": 5, "maxSeconds": 1})


def test_form_metadata_comes_from_the_fields() -> None:
    properties = schema_of(SimulatePayload)["properties"]
    assert properties["failureRate"]["title"] == "Failure rate"
    assert properties["failureRate"]["default"] == 0.0
    assert "description" in properties["minSeconds"]
    assert schema_of(ReportPayload)["properties"]["format"]["enum"] == ["csv", "json"]
