"""A team's module for tests/e2e/test_rolling_deploy_e2e.py: one type on the shared
``default`` queue (issue 31's ``acc.reverse``), loaded by some workers and not by others."""

from __future__ import annotations

from pydantic import BaseModel, Field

from jobs_worker.sdk import JobContext, handler


class Reverse(BaseModel):
    text: str = Field(max_length=1_000)


class Reversed(BaseModel):
    text: str


@handler("acc.reverse", payload=Reverse, result=Reversed, timeout_seconds=30, max_attempts=3)
async def reverse(ctx: JobContext, payload: Reverse) -> Reversed:
    return Reversed(text=payload.text[::-1])
