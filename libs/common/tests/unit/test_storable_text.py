"""Text the stores can hold (``jobs_common.storable_text``): the walk finds the first NUL or
lone surrogate in any string or object key of a decoded JSON value, with its path, and the
error it becomes; the orjson decoding of raw bodies applies it."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from jobs_common.errors import BadRequest, ValidationFailed
from jobs_common.storable_text import (
    NUL_MESSAGE,
    UNPARSABLE_BODY,
    Unstorable,
    decode_json,
    first_unstorable,
    refuse_unstorable,
    unstorable_char,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain ascii", None),
        ("", None),
        ("a\x00b", "\x00"),
        ("\x00", "\x00"),
        ("héllo wörld ✓ 😀", None),
        ("é\x00", "\x00"),
        ("\ud800", "\ud800"),
        ("x\udfff", "\udfff"),
        ("😀\udc00", "\udc00"),
        ("\uffff\U0010ffff", None),
        ("tab\tline\nbreak\x7f\x1f", None),  # other controls are a field's own business
    ],
)
def test_a_string_holds_a_nul_or_a_lone_surrogate(text: str, found: str | None) -> None:
    assert unstorable_char(text) == found


@pytest.mark.parametrize(
    ("value", "path", "in_key"),
    [
        ("a\x00", (), False),
        ({"text": "a\x00b"}, ("text",), False),
        ({"a\x00": 1}, ("a\x00",), True),
        ({"ok": "x", "items": [1, "y", {"deep": ["z", "\ud800"]}]}, ("items", 2, "deep", 1), False),
        ([[], {}, [[{"k": {"\udc00": None}}]]], (2, 0, 0, "k", "\udc00"), True),
        ({"first": "\x00", "second": "\ud800"}, ("first",), False),
    ],
)
def test_the_walk_names_the_first_offender(
    value: Any, path: tuple[str | int, ...], in_key: bool
) -> None:
    found = first_unstorable(value)
    assert found is not None
    assert (found.path, found.in_key) == (path, in_key)


@pytest.mark.parametrize(
    "value",
    [None, True, 1, 1.5, "text", [], {}, {"a": [1, 2.0, None, False, "é"]}, [[[[]]]], {"k": {}}],
)
def test_storable_values_pass(value: Any) -> None:
    assert first_unstorable(value) is None
    refuse_unstorable(value)


def test_nesting_as_deep_as_a_decoder_allows_does_not_exhaust_the_stack() -> None:
    deep: Any = "\x00"
    for _ in range(50_000):
        deep = [deep]
    found = first_unstorable(deep)
    assert found is not None and len(found.path) == 50_000
    assert first_unstorable(json.loads("[" * 900 + "]" * 900)) is None


def test_a_nul_is_a_422_naming_the_field_under_the_prefix() -> None:
    with pytest.raises(ValidationFailed) as caught:
        refuse_unstorable({"payload": {"items": ["ok", "a\x00"]}}, prefix="jobs.3")
    assert caught.value.status_code == 422
    assert caught.value.envelope() == {
        "error": "validation_error",
        "message": "request validation failed",
        "details": [{"field": "jobs.3.payload.items.1", "message": NUL_MESSAGE}],
    }


def test_a_lone_surrogate_is_a_400_and_the_answer_itself_is_valid_json() -> None:
    with pytest.raises(BadRequest) as caught:
        refuse_unstorable({"na\ud800me": "x"})
    envelope = caught.value.envelope()
    assert envelope["error"] == "bad_request"
    assert envelope["message"].startswith(UNPARSABLE_BODY)
    [detail] = envelope["details"]
    assert detail["field"] == "na\\ud800me"
    assert detail["message"].startswith("object key")
    orjson.dumps(envelope)  # an offending key is escaped, never echoed


def test_an_offending_key_is_shown_escaped() -> None:
    assert Unstorable(("a\x00b",), "\x00", in_key=True).field("payload") == "payload.a\\x00b"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"text": "\\ud800"}',
        b'{"text": "\\udc00"}',
        b'{"\\ud800": 1}',
        b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8 bytes
        b'{"text": "a\x00b"}',  # a raw control character
        b"{not json",
    ],
)
def test_decoding_refuses_what_is_not_json_text_with_a_400(raw: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        decode_json(raw)
    assert caught.value.envelope()["message"] == UNPARSABLE_BODY


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"payload": {"text": "a\\u0000b"}}', "payload.text"),
        (b'{"payload": {"a\\u0000": 1}}', "payload.a\\x00"),
        (b'{"jobs": [{}, {"payload": {"x": ["\\u0000"]}}]}', "jobs.1.payload.x.0"),
    ],
)
def test_decoding_refuses_a_nul_with_a_422_naming_it(raw: bytes, field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        decode_json(raw)
    assert [d.field for d in caught.value.details] == [field]


def test_decoding_passes_escapes_that_only_look_like_a_nul() -> None:
    # an escaped backslash followed by "u0000": the text \u0000, six storable characters
    assert decode_json(b'{"text": "\\\\u0000", "emoji": "\\ud83d\\ude00"}') == {
        "text": "\\u0000",
        "emoji": "😀",
    }


def test_a_large_batch_with_nothing_unstorable_passes_whole() -> None:
    """A 10,000-spec batch, each with a few strings and a nested payload: every string walked,
    none refused. (Its cost is a benchmark's to measure, not a timed assertion's: under a
    loaded machine a time limit fails for the machine's sake.)"""
    spec = {
        "type": "email",
        "priority": 2,
        "payload": {"to": "someone@example.com", "subject": "Hello ✓", "body": "x" * 2000},
        "retryPolicy": {"strategy": "fixed"},
        "dependsOn": ["ref:a", "ref:b"],
    }
    batch = orjson.loads(orjson.dumps({"name": "b", "jobs": [spec] * 10_000}))
    assert first_unstorable(batch) is None
    batch["jobs"][9_999]["payload"]["body"] += "\u0000"
    assert first_unstorable(batch) is not None
