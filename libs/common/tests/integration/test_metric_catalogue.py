"""The metric catalogue (docs/operations.md, "Metric catalogue"): every name dashboards and
alerts rely on, exported by the services that should, with its type and labels, and by no
other service (an outcome counted in two places would be counted twice platform-wide).

Each service runs in a process of its own, as in production: the Prometheus registry is
process-wide, and the test suite imports every service into one process. The process builds
the service's app (``create_app`` with its default settings, the lifespan not run: no broker
or database needed), asks ``/health``, and prints its ``/metrics`` (the gateway's from its
metrics app, ``jobs_gateway.adapters.metrics_server``: its public port answers 404) and, for
each name, the label names its collector declares (a labelled series with no sample yet shows
no labels).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

SERVICES = ("gateway", "submission", "scheduler", "dashboard", "worker")
EVERY = frozenset(SERVICES)

# name -> (type, label names, the services exporting it). Written out, never derived.
CATALOGUE: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {
    "jobs_submitted_total": ("counter", ("type", "priority"), frozenset({"submission"})),
    "jobs_dispatched_total": ("counter", ("queue",), frozenset({"scheduler"})),
    "jobs_started_total": ("counter", ("type",), frozenset({"worker"})),
    "jobs_succeeded_total": ("counter", ("type",), frozenset({"scheduler"})),
    "jobs_failed_total": ("counter", ("type", "terminal"), frozenset({"scheduler"})),
    "jobs_dead_total": ("counter", ("reason",), frozenset({"scheduler"})),
    "job_run_seconds": ("histogram", ("type",), frozenset({"scheduler"})),
    "job_queue_wait_seconds": ("histogram", ("type", "priority"), frozenset({"scheduler"})),
    "queue_depth": ("gauge", ("queue",), frozenset({"dashboard"})),
    "queue_oldest_ready_age_seconds": ("gauge", ("queue",), frozenset({"dashboard"})),
    "queue_time_to_drain_seconds": ("gauge", ("queue",), frozenset({"dashboard"})),
    # A project's queues (docs/flow-control.md).
    "queue_waiting": ("gauge", ("project", "queue"), frozenset({"dashboard"})),
    "queue_running": ("gauge", ("project", "queue"), frozenset({"dashboard"})),
    "queue_limit": ("gauge", ("project", "queue"), frozenset({"dashboard"})),
    "queue_paused": ("gauge", ("project", "queue"), frozenset({"dashboard"})),
    "queue_oldest_waiting_seconds": ("gauge", ("project", "queue"), frozenset({"dashboard"})),
    "dlq_size": ("gauge", (), frozenset({"dashboard"})),
    "outbox_pending": ("gauge", ("service",), frozenset({"submission", "scheduler"})),
    "lease_expirations_total": ("counter", (), frozenset({"scheduler"})),
    # How far behind each scheduler replica reads a queue (its read horizon): consumer lag.
    "scheduler_consumer_lag_seconds": ("gauge", ("queue",), frozenset({"scheduler"})),
    # Rollups (docs/dashboard.md): deltas folded.
    "scheduler_rollup_deltas_folded_total": ("counter", (), frozenset({"scheduler"})),
    # Retention (docs/operations.md): rows pruned, the oldest finished job kept, the backlog.
    "scheduler_retention_pruned_total": ("counter", ("table",), frozenset({"scheduler"})),
    "scheduler_retention_oldest_finished_seconds": (
        "gauge",
        ("status",),
        frozenset({"scheduler"}),
    ),
    "scheduler_retention_behind_seconds": ("gauge", ("status",), frozenset({"scheduler"})),
    # The job store's health (docs/operations.md, "After a prune").
    "jobstore_dead_rows": ("gauge", ("table",), frozenset({"scheduler"})),
    "jobstore_autovacuum_enabled": ("gauge", ("table",), frozenset({"scheduler"})),
    "scheduler_store_maintenance_total": ("counter", ("table", "action"), frozenset({"scheduler"})),
    "worker_active_jobs": ("gauge", (), frozenset({"worker"})),
    "worker_up": ("gauge", ("worker",), frozenset({"dashboard"})),
    "workers_up": ("gauge", (), frozenset({"dashboard"})),
    "http_requests_total": ("counter", ("route", "method", "status"), EVERY),
    "http_request_duration_seconds": ("histogram", ("route", "method"), EVERY),
}

# Names the catalogue replaced: exported by no one any more (no duplicate series).
REPLACED = (
    "gateway_http_requests_total",
    "gateway_http_request_duration_seconds",
    "dashboard_http_requests_total",
    "dashboard_http_request_duration_seconds",
    "jobs_submission_outbox_pending",
    "scheduler_outbox_pending",
    "scheduler_leases_expired_total",
    "worker_jobs_started_total",
    "worker_jobs_in_flight",
)

SCRAPE = """
import asyncio, json, sys
import httpx
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from jobs_{service}.service import create_app
from jobs_{service}.settings import Settings

async def main():
    app = create_app(Settings())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
        assert (await client.get("/health")).status_code == 200
        public = await client.get("/metrics")
    if "{service}" == "gateway":  # not on the public port: on GATEWAY_METRICS_PORT
        assert public.status_code == 404, public.status_code
        from jobs_gateway.adapters.metrics_server import metrics_app
        transport = httpx.ASGITransport(app=metrics_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://metrics") as client:
            text = (await client.get("/metrics")).text
    else:
        text = public.text
    families = {{}}
    for family in text_string_to_metric_families(text):
        name = family.name + ("_total" if family.type == "counter" else "")
        collector = REGISTRY._names_to_collectors.get(name)  # its declared label names
        families[name] = {{
            "type": family.type,
            "labels": list(getattr(collector, "_labelnames", ())),
            "samples": [[s.name, s.labels] for s in family.samples],
        }}
    json.dump(families, sys.stdout)

asyncio.run(main())
"""


async def exported(service: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(f"{service.upper()}_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRAPE.format(service=service),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()[-3000:]
    families: dict[str, Any] = json.loads(out)
    return families


async def test_every_service_exports_its_part_of_the_catalogue_and_no_other() -> None:
    scraped = dict(
        zip(SERVICES, await asyncio.gather(*(exported(s) for s in SERVICES)), strict=True)
    )
    problems: list[str] = []
    for name, (kind, labels, exporters) in CATALOGUE.items():
        for service in SERVICES:
            family = scraped[service].get(name)
            if service not in exporters:
                if family is not None:
                    problems.append(f"{service} exports {name}, counted elsewhere")
                continue
            if family is None:
                problems.append(f"{service} does not export {name}")
                continue
            if family["type"] != kind:
                problems.append(f"{service}: {name} is a {family['type']}, not a {kind}")
            if tuple(family["labels"]) != labels:
                problems.append(f"{service}: {name} has labels {family['labels']}, not {labels}")
    for service in SERVICES:
        for name in REPLACED:
            if name in scraped[service]:
                problems.append(f"{service} still exports {name}")
        health = {"route": "/health", "method": "GET", "status": "200"}
        samples = scraped[service].get("http_requests_total", {}).get("samples", [])
        if ["http_requests_total", health] not in samples:
            problems.append(f"{service}: GET /health not counted by its route template")
    assert problems == [], "\n".join(problems)
