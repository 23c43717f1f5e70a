"""Submit a day's invoices to the acme queue with the Python client and report how they ended.

    make dev HANDLERS=acme_jobs.handlers          # the platform, its workers serving acme_jobs
    .venv/bin/python examples/scripts/invoice_run.py --customers 5

Each invoice is an ``acme.invoice`` job (examples/acme_jobs); a customer the partner does not
know ends dead (FailPermanently), a busy partner makes a job retry later (RetryLater). Signs
in with JOBS_TOKEN, or the e-mail and password given (the development user by default), at
JOBS_URL (http://127.0.0.1:3000 by default). Exits 0 when every invoice succeeded, 1 when
some did not."""

from __future__ import annotations

import argparse
import os
import sys

from jobs_client import JobsClient, JobSpec


def invoices(customers: int) -> list[JobSpec]:
    """One invoice per customer; the last one is for a customer the partner does not know."""
    specs = []
    for number in range(1, customers + 1):
        customer = "c-999" if number == customers else f"c-{100 * (1 + number % 3)}"
        lines = [{"sku": f"sku-{line}", "quantity": line, "unitCents": 250} for line in (1, 2, 3)]
        payload = {"customer": customer, "lines": lines, "busyAttempts": number % 2}
        specs.append(JobSpec(type="acme.invoice", payload=payload, priority=2))
    return specs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--customers", type=int, default=5)
    parser.add_argument("--email", default="user@test.com")
    parser.add_argument("--password", default="user123")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    credentials = (
        {}
        if os.environ.get("JOBS_TOKEN")
        else {
            "email": args.email,
            "password": args.password,
        }
    )
    with JobsClient(**credentials) as jobs:
        batch = jobs.submit_batch(invoices(args.customers), name="invoice run")
        finished = jobs.wait(batch.job_ids, timeout=args.timeout)
    for job in finished:
        outcome = job.result if job.status == "succeeded" else job.last_error
        print(f"{job.id} {job.status} attempt {job.attempt}: {outcome}")
    succeeded = sum(job.status == "succeeded" for job in finished)
    print(f"{succeeded} of {len(finished)} invoices succeeded")
    return 0 if succeeded == len(finished) else 1


if __name__ == "__main__":
    sys.exit(main())
