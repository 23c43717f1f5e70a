"""Ids as the console shows them: a prefix of 8 or more hex digits (or a whole id) read as
the range of a uuid index that holds every id starting with it (PostgreSQL orders uuids by
their bytes, as their hex text reads: the prefix padded with ``0`` and with ``f``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from jobs_common.errors import ErrorDetail, ValidationFailed

MIN_DIGITS = 8  # as every id is shown in the console
# A prefix of a uuid's canonical text: hex digits, dashes only where the canonical form has them.
_CANONICAL = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
_HEX = frozenset("0123456789abcdef")
SHAPE = (
    f"at least {MIN_DIGITS} characters of an id (hex digits), as the console shows them, "
    "or a whole id"
)


@dataclass(frozen=True)
class IdPrefix:
    """Ids that start with ``digits`` (lowercase hex, 8 to 32 of them)."""

    digits: str

    @property
    def lowest(self) -> uuid.UUID:
        return uuid.UUID(self.digits.ljust(32, "0"))

    @property
    def highest(self) -> uuid.UUID:
        return uuid.UUID(self.digits.ljust(32, "f"))

    @property
    def bounds(self) -> tuple[uuid.UUID, uuid.UUID]:
        return self.lowest, self.highest


def refused(field: str, message: str) -> ValidationFailed:
    return ValidationFailed(
        "request validation failed", details=[ErrorDetail(field=field, message=message)]
    )


def parse_id_prefix(text: str, *, field: str, hint: str = SHAPE) -> IdPrefix:
    """``text`` (any case, with or without the uuid's dashes) as an :class:`IdPrefix`; a 422
    naming ``field`` (the message ``hint``) for anything else or fewer than 8 digits."""
    lowered = text.strip().lower()
    dashed = "-" in lowered
    shape_ok = len(lowered) <= (36 if dashed else 32) and all(
        (char == "-") if dashed and _CANONICAL[i] == "-" else char in _HEX
        for i, char in enumerate(lowered)
    )
    if not shape_ok:
        raise refused(field, hint)
    digits = lowered.replace("-", "")
    if len(digits) < MIN_DIGITS:
        raise refused(field, f"needs at least {MIN_DIGITS} hex digits; {hint}")
    return IdPrefix(digits)


def optional_prefix(text: str | None, *, field: str) -> IdPrefix | None:
    """:func:`parse_id_prefix` of a query parameter that may be absent or empty."""
    return None if text is None or not text.strip() else parse_id_prefix(text, field=field)
