"""MongoDB through PyMongo's async API (the maintained successor of Motor)."""

from __future__ import annotations

from typing import Any

from pymongo import AsyncMongoClient


def create_client(url: str) -> AsyncMongoClient[dict[str, Any]]:
    return AsyncMongoClient(url, tz_aware=True, uuidRepresentation="standard")
