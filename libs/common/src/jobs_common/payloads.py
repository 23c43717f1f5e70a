"""What every job payload meets, whatever its type: at most :data:`MAX_PAYLOAD_BYTES` of JSON
(a type's schema may raise its own bound with :data:`MAX_PAYLOAD_BYTES_KEYWORD`), and text
that ends up in a message header (:func:`header_safe`) without control characters.

The payload models of the built-in types are the worker's (``jobs_worker.handlers.payloads``),
announced through the type registry like any team's."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson
from pydantic_core import PydanticCustomError

BUILTIN_JOB_TYPES: Final = frozenset({"email", "image_resize", "report_generation", "simulate"})
"""The types whose handlers ship with the worker (named in metric labels, flagged as built-in
in listings): their schemas come from the registry all the same."""

MAX_PAYLOAD_BYTES: Final = 256 * 1024
MAX_PAYLOAD_BYTES_KEYWORD: Final = "x-max-payload-bytes"
# Pairs of a payload's top-level fields where the first must not exceed the second (numbers,
# or dates as YYYY-MM-DD): ``[{"lower": "minSeconds", "upper": "maxSeconds", "message": ...}]``,
# a rule JSON Schema cannot say; the submission service checks it as it checks the schema.
ORDERED_KEYWORD: Final = "x-ordered"
"""The keyword of a payload schema that raises its type's bound (an image's, say)."""

# C0 controls (CR, LF, TAB, NUL...), DEL, C1 controls (NEL), the Unicode line separators.
_HEADER_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def header_safe(value: Any) -> Any:
    """Refuse a string with a control character or line break (it would end an SMTP or HTTP
    header line and start another)."""
    if isinstance(value, str) and _HEADER_UNSAFE.search(value):
        raise PydanticCustomError(
            "control_character", "must not contain control characters or line breaks"
        )
    return value


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    try:
        return len(orjson.dumps(value, default=str))
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits
        return len(json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":")))
