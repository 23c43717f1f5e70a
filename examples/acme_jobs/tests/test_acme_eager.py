"""The acme handlers behind an eager client (``jobs_client.eager``): the code that submits
invoices is tested with the real handlers, in-process, no platform running."""

from __future__ import annotations

import pytest

from acme_jobs.handlers import Invoice, Invoiced, invoice, reverse
from jobs_client import JobFailed, JobsClient, chain, task
from jobs_client.eager import EagerJobsClient

pytestmark = pytest.mark.unit

INVOICE = task("acme.invoice", Invoice, Invoiced)
LINES = [{"sku": "a", "quantity": 2, "unitCents": 150}]


def invoice_day(jobs: JobsClient, customers: list[str]) -> dict[str, int | None]:
    """What an application would write: one invoice job per customer, totals by customer
    (None for an invoice that could not be made)."""
    handles = {
        customer: jobs.submit(
            INVOICE, Invoice.model_validate({"customer": customer, "lines": LINES})
        )
        for customer in customers
    }
    totals: dict[str, int | None] = {}
    for customer, handle in handles.items():
        try:
            totals[customer] = handle.result(timeout=10).total_cents
        except JobFailed:
            totals[customer] = None
    return totals


def test_an_invoice_day_with_an_unknown_customer() -> None:
    jobs = EagerJobsClient([invoice])
    assert invoice_day(jobs, ["c-100", "c-404"]) == {"c-100": 300, "c-404": None}


def test_a_busy_partner_costs_an_attempt_not_the_invoice() -> None:
    jobs = EagerJobsClient([invoice, reverse])
    busy = Invoice.model_validate({"customer": "c-200", "lines": LINES, "busyAttempts": 1})
    handle = jobs.submit(INVOICE, busy)
    assert handle.result().total_cents == 300
    assert jobs.get(handle.job_id).attempt == 2
    steps = chain(INVOICE.s(busy), task("acme.reverse").s({"text": "done"}))
    assert jobs.submit(steps).result() == {"reversed": "enod"}
