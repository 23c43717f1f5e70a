"""A project's queue as the API answers it (``/api/queues``), and the two limits it may
carry, :class:`RateLimit` and :class:`ConcurrencyKey`, each also read from the text people
write (``"20/s"``, ``"customerId:2"``). Like :mod:`jobs_client.models`: frozen dataclasses,
Python names, the answer kept in ``raw``, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jobs_client.models import Json, _opt_str, _req_time, _time

_RATE = re.compile(r"([0-9]+)/([a-z]+)")
_PERIODS = {"s": "second", "second": "second", "m": "minute", "min": "minute", "minute": "minute"}
_KEY = re.compile(r"(.+):([0-9]+)")


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class RateLimit:
    """At most ``limit`` of a queue's jobs started per ``per`` (``"second"`` or ``"minute"``):
    ``RateLimit(20, "second")``, or from text with :meth:`parse` (``"20/s"``)."""

    limit: int
    per: str

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """``N/s``, ``N/second``, ``N/m``, ``N/min`` or ``N/minute``, N at least 1."""
        match = _RATE.fullmatch(text.strip())
        per = _PERIODS.get(match.group(2)) if match else None
        if match is None or per is None:
            raise ValueError(
                f"not a rate: {text!r} (jobs per second or minute: 20/s, 20/second, 600/m, "
                "600/min, 600/minute)"
            )
        limit = int(match.group(1))
        if limit < 1:
            raise ValueError(f"not a rate: {text!r} (at least 1 job per {per})")
        return cls(limit, per)

    @classmethod
    def from_json(cls, body: Any) -> RateLimit | None:
        if not isinstance(body, Mapping):
            return None
        return cls(int(body["limit"]), str(body["per"]))

    def to_json(self) -> Json:
        return {"limit": self.limit, "per": self.per}

    def __str__(self) -> str:
        return f"{self.limit}/{self.per}"  # as :meth:`parse` reads it


@dataclass(frozen=True)
class ConcurrencyKey:
    """At most ``limit`` running jobs of a queue per value of their payload's ``field``:
    ``ConcurrencyKey("customerId", 2)``, or from text with :meth:`parse` (``"customerId:2"``)."""

    field: str
    limit: int

    @classmethod
    def parse(cls, text: str) -> ConcurrencyKey:
        """``FIELD:K``, K at least 1."""
        match = _KEY.fullmatch(text.strip())
        if match is None or int(match.group(2)) < 1:
            raise ValueError(
                f"not a concurrency key: {text!r} (a payload field and the running jobs per "
                "value at most, at least 1: customerId:2)"
            )
        return cls(match.group(1), int(match.group(2)))

    @classmethod
    def from_json(cls, body: Any) -> ConcurrencyKey | None:
        if not isinstance(body, Mapping):
            return None
        return cls(str(body["field"]), int(body["limit"]))

    def to_json(self) -> Json:
        return {"field": self.field, "limit": self.limit}

    def __str__(self) -> str:
        return f"{self.field}:{self.limit}"  # as :meth:`parse` reads it


@dataclass(frozen=True)
class QueueDepth:
    """How many of a queue's unfinished jobs have one status and priority."""

    status: str
    priority: int
    count: int


@dataclass(frozen=True, kw_only=True)
class Queue:
    """A project's queue (``/api/queues``): its limits (None: no limit), whether it is
    paused, the defaults its jobs take, how many of its jobs wait and run now (and by status
    and priority), and how long its oldest queued job has waited."""

    id: str
    project_id: str
    name: str
    max_concurrency: int | None
    rate_limit: RateLimit | None
    concurrency_key: ConcurrencyKey | None
    paused: bool
    paused_at: datetime | None
    paused_by: str | None
    default_priority: int | None
    default_timeout_seconds: int | None
    default_retry_policy: str | None
    created_by: str
    created_at: datetime
    updated_at: datetime
    waiting: int
    running: int
    depth: list[QueueDepth] = field(default_factory=list)
    oldest_queued_at: datetime | None = None
    oldest_age_seconds: float | None = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Queue:
        return cls(
            id=str(body["id"]),
            project_id=str(body.get("projectId", "")),
            name=str(body["name"]),
            max_concurrency=_opt_int(body.get("maxConcurrency")),
            rate_limit=RateLimit.from_json(body.get("rateLimit")),
            concurrency_key=ConcurrencyKey.from_json(body.get("concurrencyKey")),
            paused=bool(body.get("paused")),
            paused_at=_time(body.get("pausedAt")),
            paused_by=_opt_str(body.get("pausedBy")),
            default_priority=_opt_int(body.get("defaultPriority")),
            default_timeout_seconds=_opt_int(body.get("defaultTimeoutSeconds")),
            default_retry_policy=_opt_str(body.get("defaultRetryPolicy")),
            created_by=str(body.get("createdBy", "")),
            created_at=_req_time(body.get("createdAt")),
            updated_at=_req_time(body.get("updatedAt")),
            waiting=int(body.get("waiting") or 0),
            running=int(body.get("running") or 0),
            depth=[
                QueueDepth(str(e["status"]), int(e["priority"]), int(e["count"]))
                for e in body.get("depth") or []
            ],
            oldest_queued_at=_time(body.get("oldestQueuedAt")),
            oldest_age_seconds=(
                None if body.get("oldestAgeSeconds") is None else float(body["oldestAgeSeconds"])
            ),
            raw=dict(body),
        )
