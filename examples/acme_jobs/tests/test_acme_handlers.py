"""The team's own unit tests of its handlers, written with the SDK's in-process runner
(``jobs_sdk.testing.run``, docs/sdk.md "Testing a handler"): no broker, no job store."""

from __future__ import annotations

import pytest

from acme_jobs.handlers import invoice, reverse, wordcount
from jobs_sdk.testing import run

pytestmark = pytest.mark.unit

LINES = [
    {"sku": "pen", "quantity": 3, "unitCents": 150},
    {"sku": "pad", "quantity": 1, "unitCents": 400},
]


def test_reverse_reverses_and_reports_half_way() -> None:
    outcome = run(reverse, {"text": "invoice"})
    assert (outcome.status, outcome.result) == ("succeeded", {"reversed": "eciovni"})
    assert outcome.progress == [(50, "half way")]


def test_an_invoice_totals_its_lines() -> None:
    outcome = run(invoice, {"customer": "c-100", "lines": LINES})
    assert outcome.result == {"customer": "c-100", "totalCents": 850, "lines": 2}
    assert [percent for percent, _ in outcome.progress] == [50, 100]


def test_a_busy_partner_is_retried_after_a_second_and_an_unknown_customer_never() -> None:
    busy = run(invoice, {"customer": "c-100", "lines": LINES, "busyAttempts": 1})
    assert busy.status == "failed" and busy.retry_after_seconds == 1
    assert run(invoice, {"customer": "c-100", "lines": LINES, "busyAttempts": 1}, attempt=2).result
    unknown = run(invoice, {"customer": "c-404", "lines": LINES})
    assert unknown.error is not None and unknown.error.kind == "permanent"
    invalid = run(invoice, {"customer": "nobody", "lines": []})
    assert invalid.error is not None and invalid.error.error_class == "InvalidPayload"


def test_wordcount_counts_in_its_thread() -> None:
    outcome = run(wordcount, {"text": "a b a", "top": 1})
    assert outcome.result == {"words": 3, "top": [["a", 2]]}
