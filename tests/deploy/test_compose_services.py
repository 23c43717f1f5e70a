"""docker-compose.yml against the code: every service's environment variables, port, health
check, secrets, dependencies, migrations and scaling, checked with the services' own Settings
classes. Each check returns the problems it finds; the tests at the bottom break a copy of the
file and show that each check notices."""

from __future__ import annotations

import copy
import os
import re
import shlex
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import ValidationError

from jobs_common.settings import DEV_SECRET, ServiceSettings
from jobs_gateway.settings import DEV_JWT_SECRET
from jobs_worker.handlers.config import ArtifactsConfig, EmailConfig

from .deploy_files import (
    COMPOSE_FILE,
    PREFIXES,
    ROOT,
    SERVICES,
    Dockerfile,
    build_target,
    depends_on,
    environment,
    environment_fields,
    interpolate,
    load_compose,
    load_dockerfile,
    load_yaml,
    read_env_file,
    references,
    settings_class,
)

pytestmark = pytest.mark.unit

# What the stack must hold, written out.
INFRA = {"postgres", "mongo", "rabbitmq", "mailpit"}
# Monitoring: Prometheus (infra/prometheus) and Grafana (infra/grafana).
MONITORING = {"prometheus", "grafana"}
# One-shots: the migration module each runs, before the services that need it start.
ONE_SHOTS = {
    "migrate-scheduler": "jobs_scheduler.migrate",
    "migrate-gateway": "jobs_gateway.migrate",
}
# The service -> the one-shot that migrates what it reads (the job store, the gateway schema).
MIGRATED_BY = {
    "gateway": "migrate-gateway",
    "scheduler": "migrate-scheduler",
    "dashboard": "migrate-scheduler",
    "worker": "migrate-scheduler",
}
# Only what a user opens on the host: the web UI and API, the RabbitMQ console, the mail inbox,
# Prometheus and Grafana (container port 3000, published on the host as GRAFANA_PORT, 3001).
PUBLISHED = {
    ("gateway", 3000),
    ("rabbitmq", 15672),
    ("mailpit", 8025),
    ("prometheus", 9090),
    ("grafana", 3000),
}
SCALABLE = ("worker", "scheduler")
# Data that outlives the containers: named volumes.
DATA_VOLUMES = {
    "postgres": "/var/lib/postgresql/data",
    "mongo": "/data/db",
    "rabbitmq": "/var/lib/rabbitmq",
    "mailpit": "/data",
    "worker": "/app/var/artifacts",
    "prometheus": "/prometheus",
    "grafana": "/var/lib/grafana",
}
IMAGES = {
    "postgres": r"postgres:16(\.\d+)*(-.+)?",
    "mongo": r"mongo:7(\.\d+)*(-.+)?",
    "rabbitmq": r"rabbitmq:3\.13(\.\d+)*-management(-.+)?",
    "mailpit": r"axllent/mailpit:v1(\.\d+)*",
    # Prometheus 2.x, as Debian's promtool that checks infra/prometheus (tests/deploy).
    "prometheus": r"prom/prometheus:v2\.\d+\.\d+",
    "grafana": r"grafana/grafana-oss:\d+\.\d+\.\d+",
}
SECRETISH = re.compile(r"SECRET|TOKEN|PASSWORD|_PASS$", re.IGNORECASE)
# The URL each test fixture reads to find a server (jobs_testing): a shell that exports
# one for the tests must not change what the compose file means.
FIXTURE_VARIABLES = {"POSTGRES_URL", "AMQP_URL", "MONGO_URL"}
HEALTH_URL = re.compile(
    r"http://(?:127\.0\.0\.1|localhost):(?P<port>\d+)(?P<path>/health|/ready)\b"
)

PROMETHEUS_CONFIG = ROOT / "infra" / "prometheus" / "prometheus.yml"

Problems = list[str]


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load_compose()


@pytest.fixture(scope="module")
def resolved(raw: dict[str, Any]) -> dict[str, Any]:
    """The compose file with .env.example's values substituted: what the containers get."""
    return resolve(raw)


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return load_dockerfile()


def resolve(raw: dict[str, Any], **overrides: str) -> dict[str, Any]:
    resolved = interpolate(raw, read_env_file() | overrides)
    assert isinstance(resolved, dict)
    return resolved


def services(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: dict(spec or {}) for name, spec in doc["services"].items()}


def app_services(doc: dict[str, Any]) -> dict[str, str]:
    """Compose service -> the platform service (build target) it runs."""
    return {
        name: target
        for name, spec in services(doc).items()
        if (target := build_target(spec)) is not None
    }


def long_running(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: spec for name, spec in services(doc).items() if name not in ONE_SHOTS}


def container_env(doc: dict[str, Any], name: str, dockerfile: Dockerfile) -> dict[str, str]:
    """What the container's process sees: the image's ENV, then the compose environment."""
    target = app_services(doc)[name]
    return dockerfile.env(target) | environment(services(doc)[name])


def container_settings(
    doc: dict[str, Any], name: str, dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> ServiceSettings:
    """The service's Settings, read from that environment exactly as in the container."""
    target = app_services(doc)[name]
    cls = settings_class(target)
    for key in list(os.environ):
        if key.upper().startswith(PREFIXES[target]):
            monkeypatch.delenv(key)
    for key, value in container_env(doc, name, dockerfile).items():
        monkeypatch.setenv(key, value)
    return cls()


def container_ports(spec: dict[str, Any]) -> list[int]:
    ports = []
    for entry in spec.get("ports") or []:
        if isinstance(entry, dict):
            ports.append(int(entry["target"]))
        else:
            ports.append(int(str(entry).split(":")[-1].split("/")[0]))
    return ports


# Addresses a service only shows to the browser (the console's links), never calls itself.
BROWSER_LINKS = frozenset({"DASHBOARD_GRAFANA_URL", "DASHBOARD_RABBITMQ_CONSOLE_URL"})


def http_urls(env: dict[str, str]) -> dict[str, tuple[str, int]]:
    """Variables whose value is an http(s) URL the service calls -> (host, port)."""
    found = {}
    for key, value in env.items():
        if key in BROWSER_LINKS:
            continue
        parts = urlsplit(value)
        if parts.scheme in ("http", "https") and parts.hostname:
            found[key] = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    return found


def dependency_closure(doc: dict[str, Any], name: str) -> set[str]:
    seen: set[str] = set()
    pending = list(depends_on(services(doc)[name]))
    while pending:
        current = pending.pop()
        if current not in seen:
            seen.add(current)
            pending.extend(depends_on(services(doc).get(current, {})))
    return seen


# --- Checks ----------------------------------------------------------------------------------


def environment_name_problems(doc: dict[str, Any], dockerfile: Dockerfile) -> Problems:
    """Every variable a container of service X gets is X_<a field of X's Settings>."""
    problems = []
    for name, target in app_services(doc).items():
        prefix = PREFIXES[target]
        fields = environment_fields(target)
        for key in environment(services(doc)[name]):
            if not key.startswith(prefix):
                problems.append(f"{name}: {key} is not a {prefix}* setting")
            elif key[len(prefix) :].lower() not in fields:
                problems.append(f"{name}: {key} is no field of jobs_{target}.settings.Settings")
    for target in SERVICES:
        fields = environment_fields(target)
        for key in dockerfile.env(target):
            owners = [service for service, prefix in PREFIXES.items() if key.startswith(prefix)]
            if owners and owners != [target]:
                problems.append(f"Dockerfile {target}: ENV {key} belongs to {owners}")
            elif owners and key[len(PREFIXES[target]) :].lower() not in fields:
                problems.append(f"Dockerfile {target}: ENV {key} is no field of its Settings")
    return problems


def port_problems(
    doc: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> Problems:
    """The port each service listens on (its Settings, from the container's environment) is
    the one its image EXPOSEs, its health check calls, its published mapping targets and the
    other services' URLs name."""
    problems = []
    listening: dict[str, int] = {}
    for name, target in app_services(doc).items():
        if name in ONE_SHOTS:
            continue
        settings = container_settings(doc, name, dockerfile, monkeypatch)
        listening[name] = settings.port
        if settings.host != "0.0.0.0":
            problems.append(
                f"{name}: listens on {settings.host}, unreachable from other containers"
            )
        exposed = [int(port.split("/")[0]) for port in dockerfile.stages[target].args("EXPOSE")]
        if exposed != [settings.port]:
            problems.append(f"{name}: image EXPOSEs {exposed}, Settings port is {settings.port}")
        spec = services(doc)[name]
        test = str((spec.get("healthcheck") or {}).get("test") or "")
        health = HEALTH_URL.search(test)
        if health is None:
            problems.append(f"{name}: health check calls no /health or /ready on localhost")
        elif int(health["port"]) != settings.port:
            problems.append(
                f"{name}: health check calls :{health['port']}, listens on {settings.port}"
            )
        for port in container_ports(spec):
            if port != settings.port:
                problems.append(
                    f"{name}: publishes container port {port}, listens on {settings.port}"
                )
    for name, spec in services(doc).items():
        for key, (host, port) in http_urls(environment(spec)).items():
            if host in listening and port != listening[host]:
                problems.append(
                    f"{name}: {key} calls {host}:{port}, {host} listens on {listening[host]}"
                )
    return problems


def healthcheck_problems(doc: dict[str, Any]) -> Problems:
    """Every long-running container has a health check, written as one string (Compose runs it
    with the container's shell, as `CMD-SHELL`). podman-compose 1.0.3 mangles both list forms:
    it joins a `CMD` list's arguments into one shell word, and it pops the first item of the
    list in place, so a scaled service's second replica fails to be created (`make
    test-compose` found both). The services' is a Python one-liner (their images have no
    curl) that compiles."""
    problems = []
    apps = app_services(doc)
    for name, spec in long_running(doc).items():
        check = spec.get("healthcheck")
        if not check or check.get("disable") or not check.get("test"):
            problems.append(f"{name}: no health check")
            continue
        test = check["test"]
        if not isinstance(test, str):
            problems.append(f"{name}: health check is not one string")
            continue
        if name in apps:
            words = shlex.split(test)
            if not (words[:2] == ["python", "-c"] and len(words) == 3):
                problems.append(f"{name}: health check is not python -c <code>")
                continue
            try:
                compile(words[2], f"<{name} healthcheck>", "exec")
            except SyntaxError as exc:
                problems.append(f"{name}: health check does not compile: {exc}")
    return problems


def dependency_problems(doc: dict[str, Any]) -> Problems:
    """Start-up order: depends_on waits for health (service_healthy) or, for the migration
    one-shots, for success (service_completed_successfully); every host a service calls is
    started before it."""
    problems = []
    all_services = services(doc)
    for name, spec in all_services.items():
        for dependency, options in depends_on(spec).items():
            condition = options.get("condition")
            if dependency not in all_services:
                problems.append(f"{name}: depends on unknown {dependency}")
            elif dependency in ONE_SHOTS:
                if condition != "service_completed_successfully":
                    problems.append(f"{name}: waits for one-shot {dependency} with {condition}")
            elif condition != "service_healthy":
                problems.append(f"{name}: waits for {dependency} with {condition}")
            elif not all_services[dependency].get("healthcheck"):
                problems.append(f"{name}: waits for {dependency}, which has no health check")
        env = environment(spec)
        hosts = {host for host, _ in http_urls(env).values()}
        for key, value in env.items():
            if key in BROWSER_LINKS:
                continue
            parts = urlsplit(value)
            if parts.scheme and parts.hostname:
                hosts.add(parts.hostname)
        hosts |= {value for key, value in env.items() if key.endswith("_SMTP_HOST")}
        for host in hosts:
            if host not in all_services:
                problems.append(f"{name}: calls {host}, no service of this file")
            elif host not in dependency_closure(doc, name):
                problems.append(f"{name}: calls {host} without waiting for it")
    return problems


def migration_problems(doc: dict[str, Any]) -> Problems:
    """Migrations run once, in one-shots, before the services; the services do not migrate
    (nor seed) on start."""
    problems = []
    all_services = services(doc)
    apps = app_services(doc)
    for one_shot, module in ONE_SHOTS.items():
        spec = all_services.get(one_shot)
        if spec is None:
            problems.append(f"{one_shot}: missing")
            continue
        if spec.get("command") != ["python", "-m", module]:
            problems.append(f"{one_shot}: command is {spec.get('command')}, not python -m {module}")
        if f"jobs_{apps.get(one_shot)}" != module.split(".")[0]:
            problems.append(f"{one_shot}: built as {apps.get(one_shot)}, runs {module}")
        if str(spec.get("restart")) != "no":
            problems.append(f"{one_shot}: restart {spec.get('restart')!r}, a one-shot runs once")
        if depends_on(spec).get("postgres", {}).get("condition") != "service_healthy":
            problems.append(f"{one_shot}: does not wait for a healthy postgres")
    for name, one_shot in MIGRATED_BY.items():
        spec = all_services.get(name, {})
        if depends_on(spec).get(one_shot, {}).get("condition") != "service_completed_successfully":
            problems.append(f"{name}: starts without waiting for {one_shot}")
        fields = settings_class(apps.get(name, name)).model_fields
        env = environment(spec)
        for field in ("migrate_on_start", "seed_demo_users"):
            key = PREFIXES[apps.get(name, name)] + field.upper()
            if field in fields and env.get(key, "").lower() != "false":
                problems.append(f"{name}: {key} is not false, {one_shot} does it")
    return problems


def secret_problems(raw: dict[str, Any]) -> Problems:
    """Secrets come from the environment: every secret-looking variable, and the password in
    every URL, is a ${VARIABLE:-default} reference, never a literal. Every secret the code
    has a default for, and every URL (its defaults point at 127.0.0.1), is set; an optional
    URL (default None: unset turns its feature off) need not be."""
    problems = []
    reference = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-[^}]*)?\}")
    for name, spec in services(raw).items():
        env = environment(spec)
        for key, value in env.items():
            if SECRETISH.search(key) and not reference.fullmatch(value):
                problems.append(f"{name}: {key} is a literal, not from the environment")
            # user:password@ with each ${...} masked as R (their ":-" is no separator)
            userinfo = re.match(r"[a-z+]+://(?P<user>[^@/]*)@", reference.sub("R", value))
            if userinfo and ":" in userinfo["user"] and userinfo["user"].split(":", 1)[1] != "R":
                problems.append(f"{name}: {key} has a literal password")
    for name, target in app_services(raw).items():
        if name in ONE_SHOTS:
            continue
        env = environment(services(raw)[name])
        for field, info in environment_fields(target).items():
            key = PREFIXES[target] + field.upper()
            secret = SECRETISH.search(field) and isinstance(info.default, str)
            url = field.endswith("_url") and info.default is not None
            if (secret or url) and key not in env:
                problems.append(f"{name}: {key} not set (the code's default is for development)")
    return problems


def scaling_problems(doc: dict[str, Any]) -> Problems:
    """`--scale worker=N --scale scheduler=N`: no fixed name, host port or host name, and each
    replica's id left to the code (host name + pid + random)."""
    problems = []
    apps = app_services(doc)
    for name, spec in services(doc).items():
        if "container_name" in spec:
            problems.append(f"{name}: container_name prevents scaling")
    for name in SCALABLE:
        spec = services(doc)[name]
        for key in ("ports", "hostname"):
            if spec.get(key):
                problems.append(f"{name}: {key} set, replicas would collide")
        fields = settings_class(apps[name]).model_fields
        for field in ("replica_id", "worker_id"):
            if field in fields:
                if fields[field].default is not None:
                    problems.append(f"{name}: Settings.{field} has a fixed default")
                if PREFIXES[apps[name]] + field.upper() in environment(spec):
                    problems.append(f"{name}: {field} set, every replica would share it")
    return problems


def env_file_problems(compose_text: str, example: dict[str, str]) -> Problems:
    """.env.example lists exactly the variables the compose file uses, each with the default
    the compose file gives it (so the file works without a .env)."""
    problems = []
    used: dict[str, set[str | None]] = {}
    for reference in references(compose_text):
        used.setdefault(reference.name, set()).add(
            reference.arg if reference.op in ("-", ":-") else None
        )
    for name, defaults in sorted(used.items()):
        if None in defaults:
            problems.append(f"{name}: used without a default")
        if len(defaults) > 1:
            problems.append(f"{name}: different defaults {sorted(map(str, defaults))}")
        if name not in example:
            problems.append(f"{name}: missing from .env.example")
        elif defaults != {example[name]}:
            problems.append(f"{name}: .env.example says {example[name]!r}, compose {defaults}")
        if any(name.startswith(prefix) for prefix in PREFIXES.values()):
            problems.append(f"{name}: reads like a service setting; a compose variable is not one")
        if name in FIXTURE_VARIABLES:
            problems.append(f"{name}: the test fixtures read it; choose another name")
    for name in sorted(set(example) - set(used)):
        problems.append(f"{name}: in .env.example, unused by the compose file")
    return problems


# --- Tests on the real files -----------------------------------------------------------------


def test_the_stack_has_every_service_its_infrastructure_and_the_migrations(
    resolved: dict[str, Any],
) -> None:
    assert set(services(resolved)) == INFRA | MONITORING | set(SERVICES) | set(ONE_SHOTS)
    assert app_services(resolved) == {
        **{service: service for service in SERVICES},
        "migrate-scheduler": "scheduler",
        "migrate-gateway": "gateway",
    }
    for name, spec in services(resolved).items():
        if name in app_services(resolved):
            assert spec["build"]["dockerfile"] == "infra/docker/Dockerfile", name
            assert spec["build"].get("context", ".") == ".", name
            assert "image" not in spec, f"{name} is built from the repository"
    for name, pattern in IMAGES.items():
        assert re.fullmatch(pattern, services(resolved)[name]["image"]), name


def test_environment_variables_are_fields_of_each_services_settings(
    resolved: dict[str, Any], dockerfile: Dockerfile
) -> None:
    assert environment_name_problems(resolved, dockerfile) == []


def test_ports_and_health_checks_match_each_services_settings(
    resolved: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert port_problems(resolved, dockerfile, monkeypatch) == []


def test_every_long_running_container_has_a_health_check(resolved: dict[str, Any]) -> None:
    assert healthcheck_problems(resolved) == []


def test_services_start_after_what_they_need_is_healthy(resolved: dict[str, Any]) -> None:
    assert dependency_problems(resolved) == []


def test_migrations_run_once_before_the_services(resolved: dict[str, Any]) -> None:
    assert migration_problems(resolved) == []


def test_secrets_come_from_the_environment(raw: dict[str, Any]) -> None:
    assert secret_problems(raw) == []


def test_default_secrets_are_refused_in_production(
    raw: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compose defaults are the code's development secrets, which it refuses in production:
    APP_ENVIRONMENT=production without secrets of one's own cannot start."""
    development = resolve(raw)
    production = resolve(raw, APP_ENVIRONMENT="production")
    refused = 0
    for name in ("gateway", "submission", "dashboard"):
        settings = container_settings(development, name, dockerfile, monkeypatch)
        assert getattr(settings, "internal_token", None) == DEV_SECRET
        with pytest.raises(ValidationError):
            container_settings(production, name, dockerfile, monkeypatch)
        refused += 1
    assert environment(services(development)["gateway"])["GATEWAY_JWT_SECRET"] == DEV_JWT_SECRET
    assert refused == 3
    own = resolve(raw, APP_ENVIRONMENT="production", INTERNAL_TOKEN="x" * 40, JWT_SECRET="y" * 40)
    for name in ("gateway", "submission", "dashboard", "scheduler", "worker"):
        assert container_settings(own, name, dockerfile, monkeypatch).environment == "production"


def test_credentials_in_urls_are_those_the_servers_are_given(raw: dict[str, Any]) -> None:
    """Set every variable to a value of its own: each URL then carries the same user,
    password and database as the PostgreSQL and RabbitMQ containers are created with."""
    names = {reference.name for reference in references(COMPOSE_FILE.read_text())}
    doc = interpolate(raw, {name: f"v-{name.lower()}" for name in names})
    postgres = environment(services(doc)["postgres"])
    rabbitmq = environment(services(doc)["rabbitmq"])
    checked = 0
    for name, spec in services(doc).items():
        for key, value in environment(spec).items():
            parts = urlsplit(value)
            if parts.scheme.startswith("postgresql"):
                assert (parts.username, parts.password, parts.path.lstrip("/")) == (
                    postgres["POSTGRES_USER"],
                    postgres["POSTGRES_PASSWORD"],
                    postgres["POSTGRES_DB"],
                ), f"{name}: {key}"
                checked += 1
            elif parts.scheme == "amqp":
                assert (parts.username, parts.password) == (
                    rabbitmq["RABBITMQ_DEFAULT_USER"],
                    rabbitmq["RABBITMQ_DEFAULT_PASS"],
                ), f"{name}: {key}"
                checked += 1
    assert checked >= 9


def test_scheduler_and_worker_scale(resolved: dict[str, Any]) -> None:
    assert scaling_problems(resolved) == []


def test_only_the_ui_the_console_the_inbox_and_monitoring_are_published(
    resolved: dict[str, Any],
) -> None:
    published = {
        (name, port) for name, spec in services(resolved).items() for port in container_ports(spec)
    }
    assert published == PUBLISHED


def test_the_gateways_metrics_port_is_scraped_on_the_network_and_not_published(
    resolved: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway's public port answers 404 at /metrics: Prometheus scrapes its metrics port,
    reachable from the compose network (the service's host), published on no host port."""
    gateway = container_settings(resolved, "gateway", dockerfile, monkeypatch)
    metrics_port = gateway.metrics_port  # type: ignore[attr-defined]
    assert metrics_port not in (0, gateway.port)
    assert gateway.host == "0.0.0.0"
    assert container_ports(services(resolved)["gateway"]) == [gateway.port]
    config = load_yaml(PROMETHEUS_CONFIG)
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "gateway"]
    assert [t for c in job["static_configs"] for t in c["targets"]] == [f"gateway:{metrics_port}"]


def test_restart_policies(resolved: dict[str, Any]) -> None:
    for name, spec in services(resolved).items():
        expected = "no" if name in ONE_SHOTS else "unless-stopped"
        assert str(spec.get("restart")) == expected, name


def test_data_lives_in_named_volumes(
    resolved: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = set(resolved.get("volumes") or {})
    for name, path in DATA_VOLUMES.items():
        mounts = {
            str(volume).split(":")[1]: str(volume).split(":")[0]
            for volume in services(resolved)[name].get("volumes") or []
        }
        assert path in mounts, f"{name}: nothing mounted at {path}"
        assert mounts[path] in declared, f"{name}: {mounts[path]} is not a named volume"
    container_settings(resolved, "worker", dockerfile, monkeypatch)  # its environment, set
    assert str(ArtifactsConfig.from_env().artifacts_dir) == DATA_VOLUMES["worker"]


def test_env_example_lists_every_variable_with_its_default() -> None:
    assert env_file_problems(COMPOSE_FILE.read_text(), read_env_file()) == []


def test_workers_send_mail_to_the_mail_sink(
    resolved: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    container_settings(resolved, "worker", dockerfile, monkeypatch)  # its environment, set
    email = EmailConfig.from_env()
    assert (email.smtp_host, email.smtp_port) == ("mailpit", 1025)


def test_mongo_is_a_replica_set_the_submission_service_names(
    resolved: dict[str, Any], dockerfile: Dockerfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    mongo = services(resolved)["mongo"]
    command = mongo["command"]
    replica_set = command[command.index("--replSet") + 1]
    script = mongo["healthcheck"]["test"]
    assert f"_id: '{replica_set}'" in script and "rs.initiate(" in script
    assert "host: 'mongo:27017'" in script  # the member's address, as the clients reach it
    submission = container_settings(resolved, "submission", dockerfile, monkeypatch)
    url = urlsplit(submission.mongo_url)  # type: ignore[attr-defined]
    assert url.hostname == "mongo"
    assert parse_qs(url.query)["replicaSet"] == [replica_set]


# --- The checks notice a broken file ---------------------------------------------------------


def broken(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    copied = copy.deepcopy(doc)
    change(copied)
    return copied


def env_of(doc: dict[str, Any], name: str) -> dict[str, Any]:
    env = doc["services"][name]["environment"]
    assert isinstance(env, dict)
    return env


def test_a_misspelt_variable_is_found(resolved: dict[str, Any], dockerfile: Dockerfile) -> None:
    def change(doc: dict[str, Any]) -> None:
        env_of(doc, "gateway")["GATEWAY_JWT_SECRT"] = env_of(doc, "gateway").pop(
            "GATEWAY_JWT_SECRET"
        )

    assert environment_name_problems(broken(resolved, change), dockerfile) == [
        "gateway: GATEWAY_JWT_SECRT is no field of jobs_gateway.settings.Settings"
    ]


@pytest.mark.parametrize(
    "change",
    [
        lambda doc: doc["services"]["scheduler"]["healthcheck"].__setitem__(
            "test",
            'python -c "import urllib.request; '
            "urllib.request.urlopen('http://127.0.0.1:8081/ready')\"",
        ),
        lambda doc: env_of(doc, "gateway").__setitem__(
            "GATEWAY_SUBMISSION_URL", "http://submission:3002"
        ),
        lambda doc: env_of(doc, "dashboard").__setitem__("DASHBOARD_PORT", "9000"),
        lambda doc: doc["services"]["gateway"].__setitem__("ports", ["3000:3001"]),
    ],
    ids=["health-port", "url-port", "port-not-exposed", "published-port"],
)
def test_a_wrong_port_is_found(
    resolved: dict[str, Any],
    dockerfile: Dockerfile,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[dict[str, Any]], None],
) -> None:
    assert port_problems(broken(resolved, change), dockerfile, monkeypatch) != []


def test_a_missing_or_broken_health_check_is_found(resolved: dict[str, Any]) -> None:
    def no_check(doc: dict[str, Any]) -> None:
        del doc["services"]["mailpit"]["healthcheck"]

    def bad_code(doc: dict[str, Any]) -> None:
        doc["services"]["worker"]["healthcheck"]["test"] = 'python -c "import urllib.request;("'

    def argument_list(doc: dict[str, Any]) -> None:
        doc["services"]["rabbitmq"]["healthcheck"]["test"] = [
            "CMD",
            "rabbitmq-diagnostics",
            "-q",
            "check_port_connectivity",
        ]

    assert healthcheck_problems(broken(resolved, no_check)) == ["mailpit: no health check"]
    assert healthcheck_problems(broken(resolved, bad_code))[0].startswith(
        "worker: health check does not compile"
    )
    assert healthcheck_problems(broken(resolved, argument_list)) == [
        "rabbitmq: health check is not one string"
    ]


def test_a_wrong_start_order_is_found(resolved: dict[str, Any]) -> None:
    def started_only(doc: dict[str, Any]) -> None:
        doc["services"]["submission"]["depends_on"]["mongo"]["condition"] = "service_started"

    def no_wait(doc: dict[str, Any]) -> None:
        del doc["services"]["gateway"]["depends_on"]["dashboard"]

    assert dependency_problems(broken(resolved, started_only)) == [
        "submission: waits for mongo with service_started"
    ]
    assert dependency_problems(broken(resolved, no_wait)) == [
        "gateway: calls dashboard without waiting for it"
    ]


def test_a_service_migrating_on_start_is_found(resolved: dict[str, Any]) -> None:
    def migrate(doc: dict[str, Any]) -> None:
        del env_of(doc, "scheduler")["SCHEDULER_MIGRATE_ON_START"]

    def seed(doc: dict[str, Any]) -> None:
        env_of(doc, "gateway")["GATEWAY_SEED_DEMO_USERS"] = "true"

    assert migration_problems(broken(resolved, migrate)) == [
        "scheduler: SCHEDULER_MIGRATE_ON_START is not false, migrate-scheduler does it"
    ]
    assert migration_problems(broken(resolved, seed)) == [
        "gateway: GATEWAY_SEED_DEMO_USERS is not false, migrate-gateway does it"
    ]


def test_a_literal_secret_is_found(raw: dict[str, Any]) -> None:
    def literal(doc: dict[str, Any]) -> None:
        env_of(doc, "dashboard")["DASHBOARD_INTERNAL_TOKEN"] = "not-from-the-environment"

    def url(doc: dict[str, Any]) -> None:
        env_of(doc, "worker")["WORKER_AMQP_URL"] = "amqp://guest:guest@rabbitmq:5672/"

    def unset(doc: dict[str, Any]) -> None:
        del env_of(doc, "submission")["SUBMISSION_INTERNAL_TOKEN"]

    assert secret_problems(broken(raw, literal)) == [
        "dashboard: DASHBOARD_INTERNAL_TOKEN is a literal, not from the environment"
    ]
    assert secret_problems(broken(raw, url)) == ["worker: WORKER_AMQP_URL has a literal password"]
    assert secret_problems(broken(raw, unset)) == [
        "submission: SUBMISSION_INTERNAL_TOKEN not set (the code's default is for development)"
    ]


def test_what_prevents_scaling_is_found(resolved: dict[str, Any]) -> None:
    def named(doc: dict[str, Any]) -> None:
        doc["services"]["worker"]["container_name"] = "worker"

    def fixed_id(doc: dict[str, Any]) -> None:
        env_of(doc, "scheduler")["SCHEDULER_REPLICA_ID"] = "scheduler-1"

    def port(doc: dict[str, Any]) -> None:
        doc["services"]["scheduler"]["ports"] = ["8080:8080"]

    assert scaling_problems(broken(resolved, named)) == ["worker: container_name prevents scaling"]
    assert scaling_problems(broken(resolved, fixed_id)) == [
        "scheduler: replica_id set, every replica would share it"
    ]
    assert scaling_problems(broken(resolved, port)) == [
        "scheduler: ports set, replicas would collide"
    ]


def test_a_stale_env_example_is_found() -> None:
    text = COMPOSE_FILE.read_text()
    example = read_env_file()
    assert env_file_problems(text, example | {"HTTP_PORT": "8000"}) == [
        "HTTP_PORT: .env.example says '8000', compose {'3000'}"
    ]
    assert env_file_problems(text, {k: v for k, v in example.items() if k != "JWT_SECRET"}) == [
        "JWT_SECRET: missing from .env.example"
    ]
    assert env_file_problems(text + "\nx-more: ${AMQP_URL}\n", example) == [
        "AMQP_URL: used without a default",
        "AMQP_URL: missing from .env.example",
        "AMQP_URL: the test fixtures read it; choose another name",
    ]


def test_shell_words_in_commands_are_lists(resolved: dict[str, Any]) -> None:
    """Commands are exec-form lists (no shell between Docker and the process, so signals reach
    it); the only shell is in health checks that need one."""
    for name, spec in services(resolved).items():
        command = spec.get("command")
        assert command is None or isinstance(command, list), name
        check = (spec.get("healthcheck") or {}).get("test")
        if isinstance(check, list) and check[0] == "CMD-SHELL":
            assert shlex.split(check[1]), name
