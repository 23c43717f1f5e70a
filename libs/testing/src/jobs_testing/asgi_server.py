"""An ASGI app served by a real uvicorn in the test's own event loop, on a port of the host."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn


@asynccontextmanager
async def serve_app(
    app: Any, port: int, *, ws: str = "none", http: str = "h11"
) -> AsyncIterator[str]:
    """Serve ``app`` on 127.0.0.1:``port`` until the block ends; yields its base URL.
    ``ws="auto"`` serves WebSockets too, ``http="auto"`` the parser the services run."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="off",
        log_config=None,
        log_level="warning",
        ws=ws,
        http=http,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    deadline = time.monotonic() + 10
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("uvicorn stopped before it started")
        if time.monotonic() > deadline:
            raise TimeoutError("uvicorn did not start")
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
