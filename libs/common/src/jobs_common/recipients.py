"""The email recipient allow-list: one rule for the submission service (which refuses a job),
the dashboard (which refuses a schedule) and the worker (which refuses to send).

Entries are whole addresses (``ops@example.com``) or domains (``example.com``, also written
``@example.com``); a domain entry allows that domain only, not its subdomains. Matching is
case-insensitive. An empty list allows every recipient.

Settings hold the list as a comma-separated string or a JSON array (:data:`RecipientList`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

from jobs_common.settings import EntryList


def _valid(entries: list[str]) -> list[str]:
    entries = [entry.lower() for entry in entries]
    for entry in entries:
        domain = entry.rpartition("@")[2]
        if not domain or "@" in entry.removeprefix("@").partition("@")[2] or " " in entry:
            raise ValueError(f"{entry!r} is neither an email address nor a domain")
    return entries


RecipientList = Annotated[EntryList, AfterValidator(_valid)]
"""A settings field type: read from the environment as ``a@x.org,example.com`` or JSON."""


@dataclass(frozen=True)
class RecipientAllowList:
    addresses: frozenset[str]
    domains: frozenset[str]

    @classmethod
    def of(cls, entries: Iterable[str]) -> RecipientAllowList:
        addresses: set[str] = set()
        domains: set[str] = set()
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            local, at, domain = entry.rpartition("@")
            if at and local:
                addresses.add(entry)
            else:
                domains.add(domain if at else entry)
        return cls(frozenset(addresses), frozenset(domains))

    @property
    def restricts(self) -> bool:
        """False when empty: every recipient is allowed."""
        return bool(self.addresses or self.domains)

    def allows(self, address: str) -> bool:
        if not self.restricts:
            return True
        normalized = address.strip().lower()
        return normalized in self.addresses or normalized.rpartition("@")[2] in self.domains


NOT_ALLOWED = "recipient is not on the allowed list (ask an administrator)"
"""The message a refused recipient gets, wherever it is refused."""
