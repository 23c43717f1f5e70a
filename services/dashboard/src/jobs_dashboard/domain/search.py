"""The jobs list's search: a job id prefix, or ``payload.<field> = <value>`` (docs/api.md,
"Searching jobs").

An id prefix becomes a range of the ``jobs`` primary key (uuids order as their hex text, so
every id starting with the prefix lies between it padded with ``0`` and padded with ``f``).
A payload match names one top-level field; its value is read as a JSON scalar and, where the
text could be either, matches both readings (``42`` the number or the string ``"42"``): a
type's schema allows only one of them, so the answer is what that schema says without
looking it up. Both are answered from indexes (the primary key; ``ix_jobs_payload``,
scheduler migration 0026).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from jobs_common.errors import ValidationFailed
from jobs_dashboard.domain.id_prefix import IdPrefix, parse_id_prefix, refused

# A search's total counts this many matches at most (``totalCapped`` says there are more): a
# field half the jobs share would otherwise be counted row by row on every page.
COUNT_LIMIT = 10_000
MAX_SEARCH_LENGTH = 1_000
MAX_FIELD_LENGTH = 200

JsonScalar = str | int | float | bool | None

_PAYLOAD = re.compile(r"^payload\.(?P<field>[^\s=]+)\s*=\s*(?P<value>.*)$", re.DOTALL)
HINT = (
    "search by a job id prefix (8 or more hex digits, e.g. 3f2a9c1b) "
    "or by payload.<field> = <value>"
)


@dataclass(frozen=True)
class PayloadMatch:
    """Jobs whose payload's top-level ``field`` equals one of ``values``."""

    field: str
    values: tuple[JsonScalar, ...]

    def documents(self) -> list[dict[str, JsonScalar]]:
        """One containment document per reading of the value."""
        return [{self.field: value} for value in self.values]


JobSearch = IdPrefix | PayloadMatch


def refuse(message: str) -> ValidationFailed:
    return refused("search", message)


def parse_search(text: str | None) -> JobSearch | None:
    """The search ``text`` asks for; None for none (empty); a 422 naming ``search`` when it
    is neither form."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if len(text) > MAX_SEARCH_LENGTH:
        raise refuse(f"at most {MAX_SEARCH_LENGTH} characters")
    payload = _PAYLOAD.match(text)
    if payload is not None:
        return payload_match(payload.group("field"), payload.group("value").strip())
    if text.lower().startswith("payload"):
        raise refuse("write a payload search as payload.<field> = <value>, e.g. payload.to = a@b.c")
    return id_prefix(text)


def id_prefix(text: str) -> IdPrefix:
    return parse_id_prefix(text, field="search", hint=HINT)


def payload_match(field: str, raw: str) -> PayloadMatch:
    if "." in field:
        raise refuse("only a payload's top-level fields are searchable (payload.<field>)")
    if len(field) > MAX_FIELD_LENGTH:
        raise refuse(f"a field name has at most {MAX_FIELD_LENGTH} characters")
    if not raw:
        raise refuse("give a value: payload.<field> = <value>")
    return PayloadMatch(field, readings(raw))


def readings(raw: str) -> tuple[JsonScalar, ...]:
    """What a value's text may mean: a quoted JSON string only that string; ``true``,
    ``false``, ``null`` or a number that JSON value or the same text as a string; anything
    else the text as a string."""
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            raise refuse('a quoted value is a JSON string: "like this"') from None
        if not isinstance(value, str):
            raise refuse('a quoted value is a JSON string: "like this"')
        return (value,)
    try:
        value = json.loads(raw)
    except ValueError:
        return (raw,)
    if isinstance(value, bool) or value is None:
        return (value, raw)
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return (raw,)
        return (value, raw)
    return (raw,)  # an object or array: searched as the text it is
