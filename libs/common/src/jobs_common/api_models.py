"""Base for public API schemas: camelCase JSON, snake_case Python; the public API's own
response headers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Generic, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class CamelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class PagePosition(Protocol):
    """Which page a listing request asks for (``pageNumber`` from 1, ``pageSize``)."""

    @property
    def page_number(self) -> int: ...

    @property
    def page_size(self) -> int: ...


def total_pages(total_items: int, page_size: int) -> int:
    """Pages needed for ``total_items``; 0 when there are none."""
    return math.ceil(total_items / page_size) if total_items > 0 else 0


class Page(CamelModel, Generic[T]):
    """One page of a listing, the same shape on every paged route of the public API:
    ``{items, pageNumber, pageSize, totalItems, totalPages}``."""

    items: list[T]
    page_number: int
    page_size: int
    total_items: int
    total_pages: int

    @classmethod
    def of(cls, items: Sequence[T], total: int, page: PagePosition) -> Self:
        return cls(
            items=list(items),
            page_number=page.page_number,
            page_size=page.page_size,
            total_items=total,
            total_pages=total_pages(total, page.page_size),
        )


# `Idempotent-Replayed: true`: the submission service answered a repeated Idempotency-Key with
# the job it accepted the first time; the gateway passes it on (and exposes it to browsers).
REPLAYED_HEADER = "Idempotent-Replayed"
