"""Error fingerprints: alike failures group together once ids and numbers are masked."""

from __future__ import annotations

import re

_MASKS = (
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<id>",
    ),
    (re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"), "<email>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[0-9a-fA-F]{16,}\b"), "<id>"),
    (re.compile(r"\d+(\.\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def fingerprint(error_class: str | None, message: str | None) -> str:
    """``ErrorClass: message`` with uuids, long hex ids, emails and numbers masked."""
    text = (message or "").strip()
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return f"{error_class or 'Error'}: {text[:300]}"
