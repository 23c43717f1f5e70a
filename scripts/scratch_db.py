"""Scratch databases of the benches that load a PostgreSQL store of their own (``make
bench-search``, ``bench-read-scale``, ``bench-retention``, ``bench-store-upkeep``, the chart
reads): made on the server of ``POSTGRES_URL`` (or another admin URL), dropped after the run."""

from __future__ import annotations

import os

import asyncpg

ADMIN_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def url_of(name: str, admin_url: str = ADMIN_URL) -> str:
    """The database ``name`` on the admin URL's server."""
    return admin_url.rsplit("/", 1)[0] + "/" + name


async def create(name: str, *, reuse: bool = False, admin_url: str = ADMIN_URL) -> bool:
    """Create the database; False when ``reuse`` and it exists already (left as it is)."""
    admin = await asyncpg.connect(admin_url)
    try:
        if reuse and await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            return False
        await admin.execute(f'CREATE DATABASE "{name}"')
        return True
    finally:
        await admin.close()


async def drop(name: str, admin_url: str = ADMIN_URL) -> None:
    """Drop the database, closing whatever still holds a connection to it."""
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()
