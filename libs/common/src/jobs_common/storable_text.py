"""Text the stores can hold: no NUL (U+0000), no lone surrogate (U+D800..U+DFFF).

PostgreSQL refuses a NUL in ``text`` and in JSONB (SQLSTATE 22P05 "unsupported Unicode escape
sequence", 22021 for a ``text`` parameter), and neither it nor UTF-8 (BSON, message bodies)
can hold a lone surrogate: a JSON string may escape one (``"\\ud800"``), and Python's
``json`` decodes it into a ``str`` no encoder can write. A value like that, accepted, fails
later where no client hears of it (a job the scheduler cannot record). So every service
refuses it at its door, in any field and any object key, before anything is stored:

- a NUL: ``422 validation_error``, the field named (``payload.items.0.text``);
- a lone surrogate: ``400 bad_request``, the body is not valid JSON text (orjson refuses it
  while decoding; Python's ``json`` does not, and the walk below names the field).

:func:`first_unstorable` walks a decoded JSON value (no re-encoding; an ASCII string costs one
``memchr``), iteratively, so nesting as deep as a decoder allows cannot exhaust the stack.
:func:`decode_json` is the orjson decoding of a raw body with the check: orjson already
refuses lone surrogates and raw control characters, so a NUL can only come from a
``\\u0000`` escape, and the walk runs only when the raw bytes hold one.
``jobs_common.storable_input`` applies the same rule to the URL, the headers and every body
FastAPI decodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from jobs_common.errors import BadRequest, ErrorDetail, PlatformError, ValidationFailed

NUL = "\x00"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_NUL_ESCAPE = b"\\u0000"

UNPARSABLE_BODY = "request body is not valid JSON"
NUL_MESSAGE = "must not contain NUL characters (U+0000)"
SURROGATE_MESSAGE = "a lone surrogate (U+D800..U+DFFF) is not a character"

PathPart = str | int


def unstorable_char(text: str) -> str | None:
    """The first NUL or lone surrogate of ``text``, or ``None``."""
    if text.isascii():  # O(1) in CPython: the string knows its kind
        return NUL if NUL in text else None
    found = _UNSTORABLE.search(text)
    return None if found is None else found.group()


@dataclass(frozen=True)
class Unstorable:
    """Where a value holds what no store can: ``path`` from the root (keys and list
    indexes), ``in_key`` when the offender is an object key rather than a string value."""

    path: tuple[PathPart, ...]
    char: str
    in_key: bool = False

    @property
    def is_nul(self) -> bool:
        return self.char == NUL

    def field(self, prefix: str = "") -> str:
        parts = [prefix] if prefix else []
        parts.extend(_printable(part) for part in self.path)
        return ".".join(parts) or "body"

    def message(self) -> str:
        what = NUL_MESSAGE if self.is_nul else SURROGATE_MESSAGE
        return f"object key {what}" if self.in_key else what

    def error(self, prefix: str = "") -> PlatformError:
        """422 for a NUL (a valid character no store keeps), 400 for a lone surrogate (no
        character at all: the JSON text is not valid Unicode)."""
        detail = [ErrorDetail(field=self.field(prefix), message=self.message())]
        if self.is_nul:
            return ValidationFailed("request validation failed", details=detail)
        return BadRequest(f"{UNPARSABLE_BODY}: {SURROGATE_MESSAGE}", details=detail)


def _printable(part: PathPart) -> str:
    """A path part as a field name: an offending key is shown with its characters escaped
    (the answer itself must be storable, loggable JSON)."""
    if isinstance(part, int):
        return str(part)
    if unstorable_char(part) is None:
        return part
    escaped = part.replace(NUL, "\\x00").encode("utf-8", "backslashreplace")
    return escaped.decode("utf-8")


def _children(value: dict[Any, Any] | list[Any]) -> Iterator[tuple[PathPart, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def first_unstorable(value: Any) -> Unstorable | None:
    """The first string or object key of a decoded JSON value that holds a NUL or a lone
    surrogate, with its path; ``None`` when every one can be stored."""
    if isinstance(value, str):
        char = unstorable_char(value)
        return None if char is None else Unstorable((), char)
    if not isinstance(value, dict | list):
        return None
    path: list[PathPart] = []
    stack = [_children(value)]
    while stack:
        for key, item in stack[-1]:
            if isinstance(key, str) and (char := unstorable_char(key)) is not None:
                return Unstorable((*path, key), char, in_key=True)
            if isinstance(item, str):
                if (char := unstorable_char(item)) is not None:
                    return Unstorable((*path, key), char)
            elif isinstance(item, dict | list) and item:
                path.append(key)
                stack.append(_children(item))
                break
        else:
            stack.pop()
            if path:
                path.pop()
    return None


def refuse_unstorable(value: Any, *, prefix: str = "") -> None:
    """Raise the error of :meth:`Unstorable.error` if ``value`` holds a NUL or a lone
    surrogate anywhere; field paths start at ``prefix``."""
    found = first_unstorable(value)
    if found is not None:
        raise found.error(prefix)


def decode_json(raw: bytes) -> Any:
    """A JSON body decoded with orjson and checked: not JSON (a lone surrogate included):
    400; a NUL in a string or key: 422 naming it."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(UNPARSABLE_BODY) from exc
    if _NUL_ESCAPE in raw:  # the only way a NUL survives orjson; else nothing to walk for
        refuse_unstorable(value)
    return value
