"""A worker process of its own beside a running :class:`~jobs_testing.stack.Stack`: the
stack's worker environment (its broker, job store, submission service) with the test's
changes (handler modules, queues, settings), started and stopped by the test."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import httpx

from jobs_testing.infra import free_port
from jobs_testing.stack import Stack


class ExtraWorker:
    def __init__(
        self, stack: Stack, log: Path, env: Mapping[str, str], *, worker_id: str | None = None
    ) -> None:
        self.port = free_port()
        self.env = dict(stack.services["worker-1"].env)
        self.env.update(env)
        self.env.update(
            WORKER_PORT=str(self.port), WORKER_WORKER_ID=worker_id or f"extra-{self.port}"
        )
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jobs_worker"],
                env=os.environ | self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        """SIGTERM (it drains), then wait for it to exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=40)
        self.process = None

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Until its ``/ready`` answers 200; AssertionError with its log's tail after
        ``timeout`` seconds."""
        async with httpx.AsyncClient(timeout=2) as client:
            for _ in range(int(timeout / 0.1)):
                try:
                    if (await client.get(f"http://127.0.0.1:{self.port}/ready")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        raise AssertionError(f"the worker is not ready:\n{self.log.read_text()[-3000:]}")
