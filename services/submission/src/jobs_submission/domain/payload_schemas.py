"""A payload checked against the JSON Schema its type's handler announced.

One compiled validator per schema (a reload of the registry recompiles nothing that did not
change): ``jsonschema_rs``, a compiled validator about ten times faster than the pure-Python
one, so a batch of thousands of payloads costs a few milliseconds. A schema it cannot compile
is refused at submission with "its payload schema is not valid".

A payload is stored with the defaults its schema gives the top-level properties it omits
(``{}`` and the same with every default spelled out are one request, for idempotency too).
A missing or unexpected property is reported at its own path (``payload.body``).

Keywords of our own, ignored by any other reader of the schema: a type's payload bound
(``x-max-payload-bytes``, else the platform's 256 KiB), the message of a field's pattern
(``x-pattern-message``), said instead of "does not match <regex>", and pairs of fields where
one must not exceed the other (``x-ordered``: ``minSeconds`` and ``maxSeconds``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs
import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from jobs_common.body_limit import JOB_MAX_BODY_BYTES
from jobs_common.errors import ErrorDetail
from jobs_common.payloads import (
    MAX_PAYLOAD_BYTES,
    MAX_PAYLOAD_BYTES_KEYWORD,
    ORDERED_KEYWORD,
    json_size,
)

MAX_DETAILS = 20  # field errors reported for one payload
PATTERN_MESSAGE_KEYWORD = "x-pattern-message"
COMPILED_SCHEMAS = 256  # distinct schemas kept compiled (types times their live versions)


@dataclass(frozen=True)
class PayloadSchema:
    """A type's compiled payload schema and its bound."""

    schema: Mapping[str, Any]
    max_bytes: int
    validator: jsonschema_rs.Validator | None  # None: not valid JSON Schema
    defaults: tuple[tuple[str, Any], ...] = ()
    ordered: tuple[tuple[str, str, str], ...] = ()  # x-ordered: (lower, upper, message)

    def check(
        self, payload: Mapping[str, Any], *, at: str
    ) -> tuple[dict[str, Any] | None, list[ErrorDetail]]:
        """``payload`` as stored (with its defaults), or its problems, their field paths
        below ``at`` (``payload``, ``jobs.3.payload``)."""
        if self.validator is None:
            return None, [ErrorDetail(field="type", message="its payload schema is not valid")]
        size = json_size(payload)
        if size > self.max_bytes:
            message = f"payload is {size} bytes of JSON; at most {self.max_bytes} bytes"
            return None, [ErrorDetail(field=at or "payload", message=message)]
        instance = dict(payload)
        if self.validator.is_valid(instance):
            for name, default in self.defaults:
                if name not in instance:
                    instance[name] = copy.deepcopy(default)
            disordered = [
                ErrorDetail(field=_joined(at, [upper]), message=message)
                for lower, upper, message in self.ordered
                if _exceeds(instance.get(lower), instance.get(upper))
            ]
            return (None, disordered) if disordered else (instance, [])
        errors = sorted(self.validator.iter_errors(instance), key=lambda e: _path(e.instance_path))
        return None, [
            ErrorDetail(field=_joined(at, _field_path(error)), message=self._message(error))
            for error in errors[:MAX_DETAILS]
        ]

    def _message(self, error: jsonschema_rs.ValidationError) -> str:
        if error.schema_path and error.schema_path[-1] == "pattern":
            said = _at(self.schema, error.schema_path[:-1]).get(PATTERN_MESSAGE_KEYWORD)
            if isinstance(said, str):
                return said
        return str(error.message)


def payload_schema(schema: Mapping[str, Any]) -> PayloadSchema:
    """``schema`` compiled (once per distinct schema)."""
    return _compiled(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))


@lru_cache(maxsize=COMPILED_SCHEMAS)
def _compiled(canonical: bytes) -> PayloadSchema:
    schema = orjson.loads(canonical)
    try:
        Draft202012Validator.check_schema(schema)
        validator: jsonschema_rs.Validator | None = jsonschema_rs.validator_for(schema)
    except (SchemaError, jsonschema_rs.ValidationError, ValueError):
        validator = None
    return PayloadSchema(
        schema=schema,
        max_bytes=_bound(schema),
        validator=validator,
        defaults=_defaults(schema),
        ordered=_ordered(schema),
    )


def _ordered(schema: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """The ``x-ordered`` pairs a schema declares (malformed entries ignored)."""
    declared = schema.get(ORDERED_KEYWORD)
    if not isinstance(declared, list):
        return ()
    return tuple(
        (entry["lower"], entry["upper"], str(entry.get("message") or "out of order"))
        for entry in declared
        if isinstance(entry, Mapping)
        and isinstance(entry.get("lower"), str)
        and isinstance(entry.get("upper"), str)
    )


def _exceeds(lower: Any, upper: Any) -> bool:
    """Both given, of one kind (numbers, or texts such as dates), and ``lower`` > ``upper``."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lower, upper))
    texts = isinstance(lower, str) and isinstance(upper, str)
    return (numbers or texts) and lower > upper


def _defaults(schema: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The defaults of an object schema's own properties."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    return tuple(
        (name, spec["default"])
        for name, spec in properties.items()
        if isinstance(spec, Mapping) and "default" in spec
    )


def _field_path(error: jsonschema_rs.ValidationError) -> list[str | int]:
    """Where the problem is: a missing property's own path, a single unexpected one's."""
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        return [*error.instance_path, kind.property]
    if (
        isinstance(kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties)
        and len(kind.unexpected) == 1
    ):
        return [*error.instance_path, kind.unexpected[0]]
    return list(error.instance_path)


def _bound(schema: Mapping[str, Any]) -> int:
    """The payload bound a schema declares, within the job body limit; else the platform's."""
    declared = schema.get(MAX_PAYLOAD_BYTES_KEYWORD)
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
        return min(declared, JOB_MAX_BODY_BYTES)
    return MAX_PAYLOAD_BYTES


def _at(schema: Mapping[str, Any], path: Iterable[str | int]) -> Mapping[str, Any]:
    """The subschema at ``path`` (an error's schema path), or ``{}`` past a ``$ref``."""
    node: Any = schema
    for part in path:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return {}
    return node if isinstance(node, Mapping) else {}


def _path(parts: Iterable[str | int]) -> list[str]:
    return [str(part) for part in parts]


def _joined(at: str, path: Iterable[str | int]) -> str:
    return ".".join([at, *_path(path)]) if at else ".".join(_path(path))
