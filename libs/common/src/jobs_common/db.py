"""PostgreSQL connection helpers (SQLAlchemy 2 async over asyncpg)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


def async_url(url: str) -> str:
    """Accept postgres://, postgresql:// or postgresql+asyncpg:// and return the asyncpg form."""
    parsed = make_url(url.replace("postgres://", "postgresql://", 1))
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An engine whose pool hands out only connections the server has not closed.

    SQLAlchemy's ``pool_pre_ping`` costs three round trips per checkout on asyncpg (``BEGIN``,
    ``;``, ``ROLLBACK``): in the scheduler, half of PostgreSQL's transactions. asyncpg sees
    a server closing a connection (a restart, a terminated backend) as it happens, so a
    checkout asks the connection instead; a connection that breaks while in use invalidates
    the pool as usual and the caller's retry gets a fresh one.
    """
    engine = create_async_engine(async_url(url), pool_size=pool_size, max_overflow=pool_size)
    event.listen(engine.sync_engine, "checkout", refuse_closed_connection)
    return engine


def refuse_closed_connection(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """Pool ``checkout`` hook: a closed connection makes the pool try a fresh one."""
    if dbapi_connection.driver_connection.is_closed():
        raise exc.DisconnectionError("the server closed this connection")
