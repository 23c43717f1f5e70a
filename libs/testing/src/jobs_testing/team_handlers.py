"""A team's handler module for the tests that deploy it to some workers and not to others
(tests/e2e/test_rolling_deploy_e2e.py, the chaos suite's ``rolling-deploy``): one type on
the shared ``default`` queue, issue 31's ``acc.reverse``. Loaded by a worker with
``WORKER_HANDLER_MODULES=jobs_testing.team_handlers``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from jobs_sdk import JobContext, handler

TEAM_MODULE = __name__
TEAM_TYPE = "acc.reverse"


class Reverse(BaseModel):
    text: str = Field(max_length=1_000)


class Reversed(BaseModel):
    text: str


@handler(TEAM_TYPE, payload=Reverse, result=Reversed, timeout_seconds=30, max_attempts=3)
async def reverse(ctx: JobContext, payload: Reverse) -> Reversed:
    return Reversed(text=payload.text[::-1])
