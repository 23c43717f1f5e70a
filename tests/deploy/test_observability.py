"""Prometheus and Grafana of the compose stack (infra/prometheus, infra/grafana): the
configuration, the alert rules and their unit tests pass promtool (Debian's `prometheus`
package, installed by `make infra`; a missing promtool fails the tests), every metric an alert
or a dashboard queries is one the services export (the metric catalogue), the scrape targets
are the ports the services listen on, and the dashboards are provisioned Grafana dashboards
reading the provisioned data source. The tests at the bottom break a copy of each file and show
that each check notices."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .deploy_files import ROOT, SERVICES, load_compose, load_yaml, settings_class

pytestmark = pytest.mark.unit

PROMETHEUS_DIR = ROOT / "infra" / "prometheus"
PROMETHEUS_CONFIG = PROMETHEUS_DIR / "prometheus.yml"
ALERTS = PROMETHEUS_DIR / "alerts.yml"
ALERTS_TEST = PROMETHEUS_DIR / "alerts_test.yml"
GRAFANA_DIR = ROOT / "infra" / "grafana"
DATASOURCES = GRAFANA_DIR / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDERS = GRAFANA_DIR / "provisioning" / "dashboards" / "dashboards.yml"
DASHBOARDS_DIR = GRAFANA_DIR / "dashboards"
DASHBOARDS = ("platform-overview.json", "workers.json")
CATALOGUE_TEST = ROOT / "libs" / "common" / "tests" / "integration" / "test_metric_catalogue.py"

DATASOURCE_UID = "prometheus"
SEVERITIES = {"warning", "critical"}
# The services scaled with --scale: found through Compose's DNS, one target per replica.
SCALED = {"scheduler", "worker"}
# Prometheus's own series.
PROMETHEUS_OWN = {"up"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

Problems = list[str]


# --- The metric names ------------------------------------------------------------------------


def catalogue() -> dict[str, tuple[str, tuple[str, ...], frozenset[str]]]:
    """The catalogue as libs/common's catalogue test declares it (its CATALOGUE table), the
    names that test proves every service exports."""
    spec = importlib.util.spec_from_file_location("metric_catalogue_table", CATALOGUE_TEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = module.CATALOGUE
    return table


def known_metrics() -> dict[str, str]:
    """Metric name -> its type, for every name a query may use."""
    known = {name: kind for name, (kind, _, _) in catalogue().items()}
    return known | {name: "gauge" for name in PROMETHEUS_OWN}


FUNCTIONS = {
    # aggregations
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
    "bottomk", "topk", "quantile",
    # functions
    "abs", "absent", "absent_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
    "day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp",
    "floor", "histogram_quantile", "holt_winters", "hour", "idelta", "increase", "irate",
    "label_join", "label_replace", "ln", "log2", "log10", "minute", "month", "predict_linear",
    "rate", "resets", "round", "scalar", "sgn", "sort", "sort_desc", "sqrt", "time",
    "timestamp", "vector", "year", "avg_over_time", "min_over_time", "max_over_time",
    "sum_over_time", "count_over_time", "quantile_over_time", "stddev_over_time",
    "stdvar_over_time", "last_over_time", "present_over_time",
    # keywords
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "atan2", "inf", "nan",
}  # fmt: skip
STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
MATCHERS = re.compile(r"\{[^}]*\}")
RANGES = re.compile(r"\[[^\]]*\]")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
IDENTIFIER = re.compile(r"(?<![\w:.$])([A-Za-z_:][A-Za-z0-9_:]*)(?=[{\[)]|\s|$)(?!\s*\()")


def metric_names(expr: str, known: dict[str, str]) -> set[str]:
    """The metric names a PromQL expression selects: identifiers followed by ``{``, ``[``, ``)``
    or white space, label matchers, ranges, grouping labels, strings, functions and keywords
    left out; ``x_bucket``, ``x_sum`` and ``x_count`` of a known histogram ``x`` are ``x``."""
    text = STRINGS.sub('""', expr)
    text = MATCHERS.sub("{}", text)
    text = RANGES.sub("[]", text)
    text = GROUPING.sub(" ", text)
    names = set()
    for name in IDENTIFIER.findall(text):
        if name in FUNCTIONS:
            continue
        for suffix in HISTOGRAM_SUFFIXES:
            base = name.removesuffix(suffix)
            if base != name and known.get(base) == "histogram":
                name = base
                break
        names.add(name)
    return names


def alert_rules(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in doc["groups"] for rule in group["rules"] if "alert" in rule]


def panel_queries(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) for every target of every panel, rows' panels included."""
    queries = []
    for panel in panels(dashboard):
        for target in panel.get("targets") or []:
            queries.append((str(panel.get("title")), str(target.get("expr", ""))))
    return queries


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in dashboard.get("panels") or []:
        found.append(panel)
        found.extend(panel.get("panels") or [])  # a collapsed row holds its panels
    return [panel for panel in found if panel.get("type") != "row"]


def unknown_metric_problems(
    alerts: dict[str, Any], dashboards: dict[str, dict[str, Any]], known: dict[str, str]
) -> Problems:
    problems = []
    for rule in alert_rules(alerts):
        for name in sorted(metric_names(str(rule["expr"]), known) - set(known)):
            problems.append(f"alert {rule['alert']}: {name} is no exported metric")
    for file, dashboard in dashboards.items():
        for title, expr in panel_queries(dashboard):
            for name in sorted(metric_names(expr, known) - set(known)):
                problems.append(f"{file} panel {title!r}: {name} is no exported metric")
    return problems


# --- Structure -------------------------------------------------------------------------------


def alert_problems(alerts: dict[str, Any], tests: dict[str, Any]) -> Problems:
    """Every alert waits (``for``), has a severity, a summary and a description, and is unit
    tested both firing and not firing."""
    problems = []
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in tests.get("tests") or []:
        for check in case.get("alert_rule_test") or []:
            (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    for rule in alert_rules(alerts):
        name = rule["alert"]
        if not rule.get("for"):
            problems.append(f"{name}: no for:")
        if (rule.get("labels") or {}).get("severity") not in SEVERITIES:
            problems.append(f"{name}: severity is not one of {sorted(SEVERITIES)}")
        for annotation in ("summary", "description"):
            if not (rule.get("annotations") or {}).get(annotation):
                problems.append(f"{name}: no {annotation}")
        if name not in firing:
            problems.append(f"{name}: no unit test where it fires")
        if name not in quiet:
            problems.append(f"{name}: no unit test where it does not fire")
    return problems


def dashboard_problems(file: str, dashboard: dict[str, Any]) -> Problems:
    problems = []
    for key in ("uid", "title"):
        if not dashboard.get(key):
            problems.append(f"{file}: no {key}")
    if dashboard.get("schemaVersion") != 39:
        problems.append(f"{file}: schemaVersion {dashboard.get('schemaVersion')}, not 39")
    if not panels(dashboard):
        problems.append(f"{file}: no panels")
    ids = [panel.get("id") for panel in panels(dashboard)]
    if len(ids) != len(set(ids)):
        problems.append(f"{file}: panel ids repeat")
    for panel in panels(dashboard):
        title = panel.get("title")
        if (panel.get("datasource") or {}).get("uid") != DATASOURCE_UID:
            problems.append(f"{file} panel {title!r}: data source is not uid {DATASOURCE_UID}")
        targets = panel.get("targets") or []
        if not targets:
            problems.append(f"{file} panel {title!r}: no target")
        for target in targets:
            if not str(target.get("expr", "")).strip():
                problems.append(f"{file} panel {title!r}: target {target.get('refId')} no expr")
            source = target.get("datasource")
            if source is not None and source.get("uid") != DATASOURCE_UID:
                problems.append(f"{file} panel {title!r}: target data source is not prometheus")
    return problems


def metrics_port(service: str) -> int:
    """Where a service serves /metrics: its Settings ``metrics_port`` if it has one (the
    gateway, whose public port answers 404 there), else its ``port``."""
    fields = settings_class(service).model_fields
    port = fields["metrics_port"].default if "metrics_port" in fields else fields["port"].default
    assert isinstance(port, int) and port > 0, f"{service} serves no metrics by default"
    return port


def scrape_problems(config: dict[str, Any]) -> Problems:
    """A job per service, named after it, at the port its Settings serve metrics on, path
    /metrics; the scaled services found through DNS (one target per replica), the others
    static."""
    problems = []
    jobs = {job["job_name"]: job for job in config.get("scrape_configs") or []}
    for service in SERVICES:
        job = jobs.get(service)
        if job is None:
            problems.append(f"{service}: not scraped")
            continue
        port = metrics_port(service)
        if job.get("metrics_path", "/metrics") != "/metrics":
            problems.append(f"{service}: scraped at {job['metrics_path']}, not /metrics")
        if service in SCALED:
            dns = job.get("dns_sd_configs") or []
            if [(d.get("names"), d.get("type"), d.get("port")) for d in dns] != [
                ([service], "A", port)
            ]:
                problems.append(f"{service}: not found by DNS (type A, {service}, port {port})")
        else:
            targets = [t for c in job.get("static_configs") or [] for t in c.get("targets", [])]
            if targets != [f"{service}:{port}"]:
                problems.append(f"{service}: targets {targets}, listens on {service}:{port}")
    if config.get("rule_files") != [ALERTS.name]:
        problems.append(f"rule_files is {config.get('rule_files')}, not [{ALERTS.name}]")
    return problems


# --- promtool --------------------------------------------------------------------------------


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(
            "promtool is not installed: `make infra` installs Debian's prometheus package "
            "(scripts/ensure-infra.sh); the Prometheus files cannot be checked without it"
        )
    return path


def run_promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), *args], capture_output=True, text=True, cwd=cwd, timeout=60, check=False
    )


def passes(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, f"{result.args}:\n{result.stdout}\n{result.stderr}"


# --- Fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def known() -> dict[str, str]:
    return known_metrics()


@pytest.fixture(scope="module")
def alerts() -> dict[str, Any]:
    return load_yaml(ALERTS)


@pytest.fixture(scope="module")
def dashboards() -> dict[str, dict[str, Any]]:
    loaded = {}
    for file in DASHBOARDS:
        document = json.loads((DASHBOARDS_DIR / file).read_text())
        assert isinstance(document, dict), file
        loaded[file] = document
    return loaded


# --- Tests on the real files -----------------------------------------------------------------


def test_prometheus_config_passes_promtool() -> None:
    # From another directory: the rule file is found relative to the configuration.
    passes(run_promtool("check", "config", str(PROMETHEUS_CONFIG), cwd=Path("/")))


def test_alert_rules_pass_promtool() -> None:
    passes(run_promtool("check", "rules", str(ALERTS)))


def test_alert_rule_unit_tests_pass() -> None:
    passes(run_promtool("test", "rules", str(ALERTS_TEST), cwd=Path("/")))


def test_every_queried_metric_is_exported(
    alerts: dict[str, Any], dashboards: dict[str, dict[str, Any]], known: dict[str, str]
) -> None:
    assert unknown_metric_problems(alerts, dashboards, known) == []
    # the checks above read something: each catalogue histogram and gauge family is queried
    queried = {
        name
        for _, expr in (q for d in dashboards.values() for q in panel_queries(d))
        for name in metric_names(expr, known)
    }
    assert {"job_run_seconds", "job_queue_wait_seconds", "http_request_duration_seconds"} <= (
        queried
    )
    assert {"dlq_size", "jobs_dead_total", "outbox_pending", "queue_depth"} <= queried
    assert {"worker_active_jobs", "workers_up", "worker_up", "jobs_started_total"} <= queried


def test_every_alert_waits_is_labelled_and_unit_tested(alerts: dict[str, Any]) -> None:
    assert alert_problems(alerts, load_yaml(ALERTS_TEST)) == []
    assert {rule["alert"] for rule in alert_rules(alerts)} == {
        "DeadLettersGrowing",
        "OutboxLag",
        "NoLiveWorkers",
        "QueueDepthRising",
        "SchedulerDown",
        "SchedulerConsumerLag",
        "RetentionBehind",
        "JobStoreDeadRowsHigh",
        "JobStoreAutovacuumOff",
        "QueuePausedWithWorkWaiting",
    }


def test_dashboards_are_valid(dashboards: dict[str, dict[str, Any]]) -> None:
    for file, dashboard in dashboards.items():
        assert dashboard_problems(file, dashboard) == []
    uids = [dashboard["uid"] for dashboard in dashboards.values()]
    assert len(set(uids)) == len(uids)
    assert sorted(path.name for path in DASHBOARDS_DIR.glob("*.json")) == sorted(DASHBOARDS)


def test_every_service_is_scraped_at_its_port() -> None:
    assert scrape_problems(load_yaml(PROMETHEUS_CONFIG)) == []


def test_grafana_provisions_the_data_source_and_the_dashboards() -> None:
    (source,) = load_yaml(DATASOURCES)["datasources"]
    assert (source["uid"], source["type"], source["url"]) == (
        DATASOURCE_UID,
        "prometheus",
        "http://prometheus:9090",
    )
    (provider,) = load_yaml(DASHBOARD_PROVIDERS)["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"] == "/var/lib/grafana/dashboards"


def test_compose_mounts_what_prometheus_and_grafana_read() -> None:
    services = load_compose()["services"]
    prometheus, grafana = services["prometheus"], services["grafana"]
    assert "./infra/prometheus:/etc/prometheus:ro" in prometheus["volumes"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]
    assert "./infra/grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]
    assert "./infra/grafana/dashboards:/var/lib/grafana/dashboards:ro" in grafana["volumes"]
    assert grafana["depends_on"]["prometheus"]["condition"] == "service_healthy"
    assert "http://localhost:9090/-/healthy" in prometheus["healthcheck"]["test"]
    assert "http://localhost:3000/api/health" in grafana["healthcheck"]["test"]


# --- The checks notice a broken file ---------------------------------------------------------


def test_metric_names_are_read_from_promql(known: dict[str, str]) -> None:
    expr = (
        "histogram_quantile(0.95, sum by (le, route) (rate(http_request_duration_seconds_bucket"
        '{job="gateway", route=~"/api/.*"}[5m]))) > 1 and on (queue) max(queue_depth)'
        ' or absent(up{job="scheduler"}) unless sum without (instance) (foo_total offset 5m)'
    )
    assert metric_names(expr, known) == {
        "http_request_duration_seconds",
        "queue_depth",
        "up",
        "foo_total",
    }


def test_a_dashboard_querying_an_unknown_metric_is_found(
    alerts: dict[str, Any], dashboards: dict[str, dict[str, Any]], known: dict[str, str]
) -> None:
    changed = copy.deepcopy(dashboards)
    panel = panels(changed["workers.json"])[0]
    panel["targets"][0]["expr"] = "sum(worker_jobs_in_flight)"  # a name the catalogue replaced
    bucket = copy.deepcopy(dashboards)
    other = panels(bucket["platform-overview.json"])[0]
    other["targets"][0]["expr"] = (
        "histogram_quantile(0.5, sum by (le) (rate(job_wait_seconds_bucket[5m])))"
    )
    assert unknown_metric_problems(alerts, changed, known) == [
        f"workers.json panel {panel['title']!r}: worker_jobs_in_flight is no exported metric"
    ]
    assert unknown_metric_problems(alerts, bucket, known) == [
        f"platform-overview.json panel {other['title']!r}: "
        "job_wait_seconds_bucket is no exported metric"
    ]


def test_an_alert_querying_an_unknown_metric_is_found(
    alerts: dict[str, Any], dashboards: dict[str, dict[str, Any]], known: dict[str, str]
) -> None:
    changed = copy.deepcopy(alerts)
    alert_rules(changed)[0]["expr"] = "increase(dead_letters_total[15m]) > 0"
    assert unknown_metric_problems(changed, dashboards, known) == [
        "alert DeadLettersGrowing: dead_letters_total is no exported metric"
    ]


def test_a_broken_dashboard_is_found(dashboards: dict[str, dict[str, Any]]) -> None:
    changed = copy.deepcopy(dashboards["workers.json"])
    first, second = panels(changed)[:2]
    first["datasource"] = {"type": "prometheus", "uid": "other"}
    second["targets"] = []
    del changed["uid"]
    assert dashboard_problems("workers.json", changed) == [
        "workers.json: no uid",
        f"workers.json panel {first['title']!r}: data source is not uid prometheus",
        f"workers.json panel {second['title']!r}: no target",
    ]


def test_an_untested_or_unlabelled_alert_is_found(alerts: dict[str, Any]) -> None:
    tests = load_yaml(ALERTS_TEST)
    changed = copy.deepcopy(alerts)
    rule = alert_rules(changed)[0]
    del rule["for"]
    rule["labels"]["severity"] = "page"
    untested = copy.deepcopy(tests)
    untested["tests"] = [
        case
        for case in untested["tests"]
        if all(check["alertname"] != "OutboxLag" for check in case["alert_rule_test"])
    ]
    assert alert_problems(changed, tests) == [
        "DeadLettersGrowing: no for:",
        "DeadLettersGrowing: severity is not one of ['critical', 'warning']",
    ]
    assert alert_problems(alerts, untested) == [
        "OutboxLag: no unit test where it fires",
        "OutboxLag: no unit test where it does not fire",
    ]


def test_a_wrong_scrape_port_is_found() -> None:
    config = load_yaml(PROMETHEUS_CONFIG)
    changed = copy.deepcopy(config)
    for job in changed["scrape_configs"]:
        if job["job_name"] == "dashboard":
            job["static_configs"][0]["targets"] = ["dashboard:8080"]
        if job["job_name"] == "worker":
            job["dns_sd_configs"][0]["port"] = 9000
        if job["job_name"] == "gateway":  # its public port: /metrics answers 404 there
            job["static_configs"][0]["targets"] = ["gateway:3000"]
    assert scrape_problems(changed) == [
        "gateway: targets ['gateway:3000'], listens on gateway:9300",
        "dashboard: targets ['dashboard:8080'], listens on dashboard:8081",
        "worker: not found by DNS (type A, worker, port 9100)",
    ]


def test_promtool_fails_a_rule_that_no_longer_fires(tmp_path: Path) -> None:
    """The unit tests can fail: with the queue depth floor raised, QueueDepthRising no longer
    fires where alerts_test.yml expects it."""
    text = ALERTS.read_text()
    assert text.count("max by (queue) (queue_depth) > 100") == 1
    (tmp_path / ALERTS.name).write_text(
        text.replace("max by (queue) (queue_depth) > 100", "max by (queue) (queue_depth) > 1000")
    )
    shutil.copy(ALERTS_TEST, tmp_path / ALERTS_TEST.name)
    result = run_promtool("test", "rules", str(tmp_path / ALERTS_TEST.name))
    assert result.returncode != 0
    assert "QueueDepthRising" in result.stdout + result.stderr


def test_promtool_fails_a_config_without_its_rule_file(tmp_path: Path) -> None:
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump(load_yaml(PROMETHEUS_CONFIG)))
    result = run_promtool("check", "config", str(config))
    assert result.returncode != 0
    assert "alerts.yml" in result.stdout + result.stderr
