"""A real Prometheus (Debian's `prometheus` package, `/usr/bin/prometheus`) scrapes the running
e2e stack with the scrape jobs and the alert rules of infra/prometheus, and every alert rule
expression and every Grafana panel query (infra/grafana/dashboards) is valid PromQL and, with
any trailing comparison against a constant stripped, selects series the stack exports: a
query whose metric is misnamed, mislabelled or never exported returns no data and fails here
(the unit tests in tests/deploy/test_observability.py only compare names with the catalogue)."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from jobs_testing.infra import free_port
from jobs_testing.plugin import RabbitServer
from jobs_testing.stack import Stack

from ..deploy.test_observability import (
    ALERTS,
    DASHBOARDS,
    DASHBOARDS_DIR,
    PROMETHEUS_CONFIG,
    alert_rules,
    panel_queries,
)
from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PROMETHEUS = Path("/usr/bin/prometheus")
# What Grafana puts for $__rate_interval with its default 15 s scrape interval (4 x 15 s); the
# window holds dozens of this Prometheus's 1 s scrapes.
RATE_INTERVAL = "1m"
# Queries (after stripping) that legitimately select nothing in a healthy test stack.
NO_DATA_EXPECTED = {
    'sum by (job) (rate(http_requests_total{status=~"5.."}[1m]))': (
        "5xx responses: a healthy stack answers none, and the series only exists once one was"
    ),
}
FAST_SUCCESS = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0.05}
FAILS_AT_ONCE = {"immediateFailureRate": 1, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}


# --- The queries -----------------------------------------------------------------------------


def queries() -> list[tuple[str, str]]:
    """(where, expr) for every alert rule and every dashboard panel target."""
    found = [
        (f"alert {rule['alert']}", str(rule["expr"]).strip())
        for rule in alert_rules(yaml.safe_load(ALERTS.read_text()))
    ]
    for file in DASHBOARDS:
        dashboard = yaml.safe_load((DASHBOARDS_DIR / file).read_text())  # JSON is YAML
        for title, expr in panel_queries(dashboard):
            found.append((f"{file} panel {title!r}", grafana_expr(expr)))
    return found


def grafana_expr(expr: str) -> str:
    return expr.replace("$__rate_interval", RATE_INTERVAL).strip()


def top_level_split(expr: str, operators: tuple[str, ...]) -> list[str]:
    """``expr`` split at the binary ``operators`` outside parentheses, brackets, braces and
    strings (keywords as whole words); one part when there is none."""
    parts, depth, start, quote, i = [], 0, 0, "", 0
    while i < len(expr):
        char = expr[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            for op in operators:
                word = op[0].isalpha()
                if expr.startswith(op, i) and (
                    not word
                    or (
                        (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_"))
                        and not (expr[i + len(op) : i + len(op) + 1].isalnum())
                    )
                ):
                    parts.append(expr[start:i])
                    i += len(op)
                    start = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    parts.append(expr[start:])
    return [part.strip() for part in parts]


def unwrap(expr: str) -> str:
    """``expr`` without parentheses around all of it."""
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for i, char in enumerate(expr):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and i < len(expr) - 1:
                return expr
        expr = expr[1:-1].strip()
    return expr


COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")
CONSTANT = re.compile(r"(?:bool\s+)?[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.I)


def data_queries(expr: str) -> list[str]:
    """The parts of ``expr`` that must select series: each operand of a top-level ``and``,
    ``or`` or ``unless`` (an ``absent(...)`` one left out: it returns data only when the
    series is missing), with a trailing comparison against a constant stripped."""
    expr = unwrap(expr.strip())
    operands = top_level_split(expr, ("and", "or", "unless"))
    if len(operands) > 1:
        return [q for o in operands if not o.startswith("absent(") for q in data_queries(o)]
    compared = top_level_split(expr, COMPARISONS)
    if len(compared) == 2 and CONSTANT.fullmatch(compared[1]):
        return data_queries(compared[0])
    return [expr]


def test_data_queries_strip_comparisons_and_absent() -> None:
    assert data_queries("max(delta(dlq_size[15m])) > 0") == ["max(delta(dlq_size[15m]))"]
    assert data_queries("max(workers_up) == 0 or absent(workers_up)") == ["max(workers_up)"]
    assert data_queries(
        '(\n  max by (service) (a{service="x"})\n  or sum by (service) (a{service="y"})\n) > 100'
    ) == ['max by (service) (a{service="x"})', 'sum by (service) (a{service="y"})']
    assert data_queries("max by (q) (deriv(d[10m])) > 0\nand max by (q) (d) > 100") == [
        "max by (q) (deriv(d[10m]))",
        "max by (q) (d)",
    ]
    assert data_queries("sum(rate(a[1m])) / sum(rate(b[1m]))") == [
        "sum(rate(a[1m])) / sum(rate(b[1m]))"
    ]
    assert data_queries('up{job="s", x=~"a|b"} == 0 or absent(up{job="s"})') == [
        'up{job="s", x=~"a|b"}'
    ]


# --- Prometheus ------------------------------------------------------------------------------


def address(metrics_url: str) -> str:
    """``host:port`` of a ``http://host:port/metrics`` URL."""
    return metrics_url.removeprefix("http://").removesuffix("/metrics")


def scrape_config(stack: Stack, prometheus_port: int, rabbitmq: str | None) -> dict[str, Any]:
    """infra/prometheus/prometheus.yml with the same jobs and rule files, each job's targets the
    stack's metrics ports (the gateway's metrics port, not its public one; both workers under
    `worker`), scraped and evaluated every second."""
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    targets = {
        name: [address(service.metrics_url)]
        for name, service in stack.services.items()
        if not name.startswith("worker-")
    }
    targets["worker"] = [
        address(s.metrics_url) for n, s in stack.services.items() if n.startswith("worker-")
    ]
    targets["prometheus"] = [f"127.0.0.1:{prometheus_port}"]
    jobs = []
    for job in config["scrape_configs"]:
        name = job["job_name"]
        if name == "rabbitmq":
            if rabbitmq is None:
                continue  # the local broker has no rabbitmq_prometheus plugin (see rabbitmq_target)
            targets[name] = [rabbitmq]
        assert name in targets, f"scrape job {name!r} has no counterpart in the e2e stack"
        job = {k: v for k, v in job.items() if k not in ("dns_sd_configs", "static_configs")}
        job["static_configs"] = [{"targets": targets[name]}]
        jobs.append(job)
    config["scrape_configs"] = jobs
    return config


async def rabbitmq_target(rabbit_server: RabbitServer) -> str | None:
    """The local broker's rabbitmq_prometheus endpoint (:15692) when the plugin is enabled; the
    compose image enables it, the test broker (scripts/ensure-infra.sh) usually does not, and
    no query of the alerts or dashboards reads RabbitMQ's own metrics."""
    host = httpx.URL(rabbit_server.management_url).host or "127.0.0.1"
    try:
        async with httpx.AsyncClient(timeout=2) as client:
            response = await client.get(f"http://{host}:15692/metrics")
    except httpx.HTTPError:
        return None
    return f"{host}:15692" if response.status_code == 200 else None


def launch(config: dict[str, Any], port: int, directory: Path) -> subprocess.Popen[bytes]:
    """Prometheus on 127.0.0.1:``port`` with ``config`` and alerts.yml beside it, its data and
    its log (prometheus.log) in ``directory``."""
    if not PROMETHEUS.is_file():
        pytest.fail(
            f"{PROMETHEUS} is missing: `make infra` installs Debian's prometheus package "
            "(scripts/ensure-infra.sh), whose server this test runs against the stack"
        )
    shutil.copy(ALERTS, directory / ALERTS.name)
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    with (directory / "prometheus.log").open("wb") as output:
        return subprocess.Popen(
            [
                str(PROMETHEUS),
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=directory,
        )


@pytest.fixture
async def prometheus(
    stack: Stack, rabbit_server: RabbitServer, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    port = free_port()
    config = scrape_config(stack, port, await rabbitmq_target(rabbit_server))
    process = await asyncio.to_thread(launch, config, port, tmp_path)
    log = tmp_path / "prometheus.log"
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            deadline = asyncio.get_running_loop().time() + 30
            while True:
                assert process.poll() is None, f"prometheus exited:\n{log.read_text()[-3000:]}"
                try:
                    if (await client.get("/-/ready")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert asyncio.get_running_loop().time() < deadline, (
                    f"prometheus not ready within 30 s:\n{log.read_text()[-3000:]}"
                )
                await asyncio.sleep(0.2)
            rules = (await client.get("/api/v1/rules")).json()
            loaded = {r["name"] for g in rules["data"]["groups"] for r in g["rules"]}
            assert loaded == {
                rule["alert"] for rule in alert_rules(yaml.safe_load(ALERTS.read_text()))
            }
            yield client
    finally:
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 15)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait, 5)


async def query(client: httpx.AsyncClient, expr: str) -> dict[str, Any]:
    response = await client.get("/api/v1/query", params={"query": expr})
    body: dict[str, Any] = response.json()
    return body


async def wait_for_targets(client: httpx.AsyncClient, timeout: float = 20.0) -> list[str]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        active = (await client.get("/api/v1/targets")).json()["data"]["activeTargets"]
        jobs = sorted(f"{t['labels']['job']} {t['scrapeUrl']}" for t in active)
        down = [
            f"{t['scrapeUrl']}: {t['health']} {t.get('lastError', '')}"
            for t in active
            if t["health"] != "up"
        ]
        if active and not down:
            return jobs
        assert asyncio.get_running_loop().time() < deadline, f"targets not up: {down}"
        await asyncio.sleep(0.5)


# --- The test --------------------------------------------------------------------------------


async def submit(client: httpx.AsyncClient, payload: dict[str, Any], **fields: Any) -> str:
    body = {"type": "simulate", "priority": 2, "payload": payload, **fields}
    response = await client.post("/api/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["jobId"]
    return job_id


async def test_every_alert_and_panel_query_is_valid_and_has_data(
    prometheus: httpx.AsyncClient, stack: Stack, user: httpx.AsyncClient
) -> None:
    # Work while Prometheus scrapes: successes of every priority, a retried failure, dead jobs.
    ids = {
        "succeeded": [await submit(user, FAST_SUCCESS, priority=p) for p in (1, 2, 3)],
        "dead": [
            await submit(user, FAILS_AT_ONCE, maxAttempts=1),
            await submit(user, FAILS_AT_ONCE, maxAttempts=2),  # one retry: terminal="false"
        ],
    }
    for status, jobs in ids.items():
        for job_id in jobs:
            assert (await wait_for_job(user, job_id, {status}, timeout=30))["status"] == status

    targets = await wait_for_targets(prometheus)
    assert sum(t.startswith("worker ") for t in targets) == 2, targets
    # The gateway's metrics come from its metrics port; its public port does not serve them.
    gateway = stack.services["gateway"]
    assert f"gateway {gateway.metrics_url}" in targets
    assert gateway.metrics_url != f"{gateway.url}/metrics"
    async with httpx.AsyncClient(timeout=5) as client:
        public = await client.get(f"{gateway.url}/metrics")
    assert public.status_code == 404, public.text
    assert {t.split()[0] for t in targets} >= {
        "gateway",
        "submission",
        "dashboard",
        "scheduler",
        "worker",
        "prometheus",
    }

    # Every expression, as written, is valid PromQL.
    all_queries = queries()
    invalid = []
    for where, expr in all_queries:
        body = await query(prometheus, expr)
        if body.get("status") != "success":
            invalid.append(f"{where}: {expr!r}: {body.get('error')}")
    assert invalid == [], "\n".join(invalid)

    # Prometheus evaluates every alert rule without an error.
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        groups = (await prometheus.get("/api/v1/rules")).json()["data"]["groups"]
        unhealthy = [
            f"{r['name']}: {r.get('health')} {r.get('lastError', '')}"
            for g in groups
            for r in g["rules"]
            if r.get("health") != "ok"
        ]
        if not unhealthy or asyncio.get_running_loop().time() >= deadline:
            break
        await asyncio.sleep(0.5)
    assert unhealthy == [], unhealthy

    # Every series they read exists: poll (the dashboard refreshes its gauges every 5 s, a rate
    # needs two samples in its window), bounded.
    wanted = {q: where for where, expr in all_queries for q in data_queries(expr)}
    assert set(NO_DATA_EXPECTED) <= set(wanted), "an allow-listed query no longer exists"
    missing: dict[str, str] = {}
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        missing = {}
        for expr, where in wanted.items():
            body = await query(prometheus, expr)
            assert body.get("status") == "success", f"{where}: {expr!r}: {body.get('error')}"
            if not body["data"]["result"]:
                missing[expr] = where
        unexpected = {q: w for q, w in missing.items() if q not in NO_DATA_EXPECTED}
        if not unexpected or asyncio.get_running_loop().time() >= deadline:
            break
        await asyncio.sleep(1)
    assert unexpected == {}, "queries without data:\n" + "\n".join(
        f"{where}: {expr}" for expr, where in unexpected.items()
    )
