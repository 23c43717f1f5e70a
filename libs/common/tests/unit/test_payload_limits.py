"""Payload bounds shared by the submission, the dashboard and the worker: the JSON size of
every type, free-text lengths, and no control characters in what becomes an SMTP header."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from jobs_common.payloads import (
    MAX_EMAIL_BODY_CHARS,
    MAX_PAYLOAD_BYTES,
    PAYLOAD_MODELS,
    EmailPayload,
    ImageResizePayload,
    SimulatePayload,
    json_size,
)

pytestmark = pytest.mark.unit


def errors(model: Any, data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return [(".".join(map(str, e["loc"])), e["type"]) for e in caught.value.errors()]


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


def test_a_recipient_refuses_control_characters_and_extra_addresses() -> None:
    assert errors(EmailPayload, email(to="a@example.com\r\nBcc: b@example.com")) == [
        ("to", "control_character")
    ]
    assert errors(EmailPayload, email(to="Name\x01 <a@example.com>")) == [
        ("to", "control_character")
    ]
    assert errors(EmailPayload, email(to="a@example.com, b@example.com"))[0][0] == "to"


def test_a_body_keeps_its_line_breaks_within_its_length() -> None:
    body = "Dear you,\r\n\n\tindented\n" * 10
    assert EmailPayload.model_validate(email(body=body)).body == body
    assert errors(EmailPayload, email(body="nul\x00")) == [("body", "control_character")]
    assert errors(EmailPayload, email(body="esc\x1b[0m")) == [("body", "control_character")]
    assert errors(EmailPayload, email(body="x" * (MAX_EMAIL_BODY_CHARS + 1))) == [
        ("body", "string_too_long")
    ]
    assert errors(EmailPayload, email(subject="s" * 201)) == [("subject", "string_too_long")]


@pytest.mark.parametrize("job_type", sorted(set(PAYLOAD_MODELS) - {"image_resize"}))
def test_every_payload_is_bounded_as_json(job_type: str) -> None:
    oversized = {"padding": "x" * MAX_PAYLOAD_BYTES}
    assert errors(PAYLOAD_MODELS[job_type], oversized) == [("", "payload_too_large")]


def test_an_image_payload_is_bounded_by_its_image() -> None:
    assert ImageResizePayload.max_json_bytes > MAX_PAYLOAD_BYTES
    oversized = {"width": 1, "height": 1, "imageBase64": "A" * ImageResizePayload.max_json_bytes}
    assert errors(ImageResizePayload, oversized) == [("", "payload_too_large")]


def test_a_seed_is_a_64_bit_integer() -> None:
    assert SimulatePayload.model_validate({"seed": -(2**63)}).seed == -(2**63)
    assert errors(SimulatePayload, {"seed": 2**63}) == [("seed", "less_than_equal")]


def test_json_size_counts_utf8_bytes_even_beyond_orjson() -> None:
    assert json_size({"a": "é"}) == len('{"a":"é"}'.encode())
    assert json_size({"n": 2**70}) == len('{"n":1180591620717411303424}')
