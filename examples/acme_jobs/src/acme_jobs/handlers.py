"""Four job types on the ``acme`` queue, served by workers started with
``WORKER_HANDLER_MODULES=acme_jobs.handlers`` (``make dev HANDLERS=acme_jobs.handlers``).

- ``acme.reverse``: the example in docs/api.md.
- ``acme.invoice``: async; reports progress per line, asks to be retried later while the
  (simulated) partner is busy, fails permanently for an unknown customer.
- ``acme.wordcount``: sync (runs in the worker's thread pool); CPU work with a result model.
- ``acme.sleep``: async; waits, and stops early when the job is cancelled.
"""

from __future__ import annotations

import asyncio
import collections
import re
import time

from pydantic import BaseModel, Field

from jobs_sdk import FailPermanently, JobContext, RetryLater, handler

QUEUE = "acme"
KNOWN_CUSTOMERS = frozenset({"c-100", "c-200", "c-300"})


class Reverse(BaseModel):
    text: str = Field(max_length=10_000)


@handler("acme.reverse", payload=Reverse, timeout_seconds=30, max_attempts=3, queue=QUEUE)
async def reverse(ctx: JobContext, payload: Reverse) -> dict[str, str]:
    """The example in docs/api.md."""
    ctx.log.info("reversing %d characters", len(payload.text))
    await ctx.progress(50, "half way")
    return {"reversed": payload.text[::-1]}


class InvoiceLine(BaseModel):
    sku: str = Field(min_length=1, max_length=40)
    quantity: int = Field(ge=1, le=10_000)
    unit_cents: int = Field(ge=0, alias="unitCents")


class Invoice(BaseModel):
    customer: str = Field(pattern=r"^c-\d+$", description="A customer id, c-<digits>.")
    lines: list[InvoiceLine] = Field(min_length=1, max_length=100)
    busy_attempts: int = Field(
        default=0,
        ge=0,
        le=5,
        alias="busyAttempts",
        description="Attempts on which the partner answers 'busy' (to see RetryLater).",
    )


class Invoiced(BaseModel):
    customer: str
    total_cents: int = Field(alias="totalCents")
    lines: int


@handler("acme.invoice", payload=Invoice, result=Invoiced, queue=QUEUE, timeout_seconds=60)
async def invoice(ctx: JobContext, payload: Invoice) -> Invoiced:
    if payload.customer not in KNOWN_CUSTOMERS:
        raise FailPermanently(f"unknown customer {payload.customer}")
    if ctx.attempt <= payload.busy_attempts:
        raise RetryLater(delay_seconds=1, message="the billing partner is busy")
    total = 0
    for number, line in enumerate(payload.lines, start=1):
        total += line.quantity * line.unit_cents
        await ctx.progress(100 * number / len(payload.lines), f"line {number}: {line.sku}")
        await asyncio.sleep(0)
    ctx.log.info("invoiced %s: %d cents", payload.customer, total)
    return Invoiced(customer=payload.customer, totalCents=total, lines=len(payload.lines))


class Text(BaseModel):
    text: str = Field(max_length=100_000)
    top: int = Field(default=3, ge=1, le=50)
    block_seconds: float = Field(
        default=0.0, ge=0, le=10, alias="blockSeconds", description="Blocking work to do first."
    )


class WordCount(BaseModel):
    words: int
    top: list[tuple[str, int]]


@handler("acme.wordcount", payload=Text, result=WordCount, queue=QUEUE)
def wordcount(ctx: JobContext, payload: Text) -> WordCount:
    time.sleep(payload.block_seconds)  # a blocking call: fine in a sync handler
    words = re.findall(r"[a-z']+", payload.text.lower())
    ctx.report_progress(100, f"{len(words)} words")
    return WordCount(words=len(words), top=collections.Counter(words).most_common(payload.top))


class Sleep(BaseModel):
    seconds: float = Field(ge=0, le=600)


@handler("acme.sleep", payload=Sleep, queue=QUEUE, timeout_seconds=900)
async def sleep(ctx: JobContext, payload: Sleep) -> dict[str, float]:
    started = time.monotonic()
    await ctx.progress(0, f"waiting {payload.seconds:g} s")
    try:
        async with asyncio.timeout(payload.seconds):
            await ctx.wait_cancelled()  # a cancel also cancels this task at its next await
    except TimeoutError:
        pass
    return {"slept": round(time.monotonic() - started, 3)}
