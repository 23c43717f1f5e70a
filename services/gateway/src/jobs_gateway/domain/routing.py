"""The routing table: which backend answers a public ``/api/...`` call, and at which path.

A few submission routes are listed explicitly; every other ``/api/{path}`` (any method) goes to
the dashboard unchanged. Matching works on decoded path segments; ``{name}`` matches one segment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from jobs_common.errors import BadRequest

Upstream = Literal["submission", "dashboard"]
UPSTREAMS: tuple[Upstream, ...] = ("submission", "dashboard")


@dataclass(frozen=True)
class RouteRule:
    method: str
    pattern: str  # public path below /api, e.g. "jobs/{jobId}/status"
    upstream: Upstream
    target: str  # upstream path with the same placeholders, e.g. "/api/v1/jobs/{jobId}/status"

    @property
    def template(self) -> str:
        return "/api/" + self.pattern


@dataclass(frozen=True)
class Target:
    upstream: Upstream
    path: str  # raw (still percent-encoded) upstream path
    template: str  # low-cardinality label for metrics and logs


ROUTES: tuple[RouteRule, ...] = (
    RouteRule("POST", "jobs", "submission", "/api/v1/jobs"),
    RouteRule("GET", "jobs/{jobId}/status", "submission", "/api/v1/jobs/{jobId}/status"),
    RouteRule("POST", "batches", "submission", "/api/v1/batches"),
    RouteRule("GET", "batches/{batchId}/status", "submission", "/api/v1/batches/{batchId}/status"),
    RouteRule("GET", "job-types", "submission", "/api/v1/job-types"),
)
FALLBACK_UPSTREAM: Upstream = "dashboard"
FALLBACK_TEMPLATE = "/api/{path}"


def _match(pattern: str, segments: list[str]) -> dict[str, str] | None:
    parts = pattern.split("/")
    if len(parts) != len(segments):
        return None
    params: dict[str, str] = {}
    for part, segment in zip(parts, segments, strict=True):
        if part.startswith("{") and part.endswith("}"):
            if not segment:
                return None
            params[part[1:-1]] = segment
        elif part != segment:
            return None
    return params


def resolve(method: str, raw_path: str) -> Target:
    """Route ``method`` + ``raw_path`` (the percent-encoded part after ``/api/``)."""
    raw_segments = raw_path.split("/")
    decoded = [unquote(s) for s in raw_segments]
    if any(s in (".", "..") or "/" in s or "\\" in s for s in decoded):
        raise BadRequest("invalid path")
    method = method.upper()
    for rule in ROUTES:
        if rule.method != method:
            continue
        params = _match(rule.pattern, decoded)
        if params is None:
            continue
        # substitute the raw (still encoded) segments so the upstream sees what the client sent
        raw_params = {
            name: raw_segments[i]
            for i, part in enumerate(rule.pattern.split("/"))
            if part.startswith("{") and (name := part[1:-1]) in params
        }
        path = rule.target
        for name, value in raw_params.items():
            path = path.replace("{" + name + "}", value)
        return Target(rule.upstream, path, rule.template)
    return Target(FALLBACK_UPSTREAM, "/api/" + raw_path, FALLBACK_TEMPLATE)
