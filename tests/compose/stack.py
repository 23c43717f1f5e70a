"""docker-compose.yml run for real under podman (`make test-compose`, docs/operations.md, "The
compose stack under podman").

Two gaps of this machine kind's tools are closed here, and only these:

- podman-compose 1.0.3 merges override files by concatenating lists (an override's `command`
  or healthcheck `test` would be appended to the original), so Compose's own resolver (Debian's
  docker-compose, which needs no engine) merges docker-compose.yml with the podman override
  file and podman-compose runs the result;
- podman-compose 1.0.3 ignores `depends_on` conditions and podman 4.3 runs health checks only
  through systemd, which these machines lack: :meth:`ComposeStack.up` starts the services in
  the compose file's dependency order and runs each dependency's own health check (`podman
  healthcheck run`) until it passes, or waits for a one-shot to exit 0, before starting what
  depends on it, recording when each condition was met.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "jobs-compose-test"
COMPOSE_FILES = ("docker-compose.yml", "infra/podman/compose.podman.yml")
CONTAINERS_CONF = ROOT / "infra" / "podman" / "containers.conf"
BASE_IMAGES = {
    "PYTHON_IMAGE": "localhost/jobs-python:3.11-slim",
    "NODE_IMAGE": "localhost/jobs-node:22-slim",
}
# Services of docker-compose.yml this machine cannot run, and why (printed by the harness).
LEFT_OUT = {
    "grafana": "Grafana has no Debian package and its image cannot be pulled (no registry)",
}
# One image per build target: the one-shot migrations run their service's image.
IMAGE_OF_TARGET = "localhost/jobs-{target}:compose-test"


class ComposeError(AssertionError):
    """The stack did not do what the compose file says."""


def podman_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF), **(extra or {})}


def run(
    command: list[str],
    *,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=dict(env or podman_env()),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise ComposeError(
            f"{' '.join(command[:6])} ... exited {done.returncode}:\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def podman_time(value: str) -> float:
    """podman inspect's RFC 3339 time with nanoseconds (`2026-12-04T16:57:10.41861049Z`,
    or an offset for Z) as a Unix time."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", value)
    if match is None:
        raise ValueError(f"not a podman time: {value!r}")
    whole, fraction, zone = match.groups()
    parsed = datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    return parsed.timestamp() + float(f"0.{fraction or 0}")


def seconds(value: str | int | float | None, default: float) -> float:
    """A Compose duration (`10s`, `1m30s`, `500ms`) in seconds."""
    if value is None:
        return default
    if isinstance(value, int | float):
        return float(value)
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    index = 0
    while index < len(value):
        char = value[index]
        if char.isdigit() or char == ".":
            number += char
            index += 1
            continue
        unit = "ms" if value[index : index + 2] == "ms" else char
        total += float(number) * units[unit]
        number = ""
        index += len(unit)
    return total + (float(number) if number else 0.0)


@dataclass
class Container:
    name: str
    service: str
    hostname: str
    state: dict[str, Any]
    restarts: int

    @property
    def running(self) -> bool:
        return bool(self.state.get("Running"))

    @property
    def started_at(self) -> float:
        return podman_time(self.state["StartedAt"])

    @property
    def pid(self) -> int:
        return int(self.state["Pid"])


@dataclass
class StartLog:
    """When each service's containers started and when each condition on it was met."""

    started: dict[str, float] = field(default_factory=dict)  # first container's start
    healthy: dict[str, float] = field(default_factory=dict)  # every container healthy
    completed: dict[str, float] = field(default_factory=dict)  # one-shot exited 0
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (service, dep, condition)

    def early_starts(self) -> list[str]:
        """Services started before a dependency met its condition (none, if the order held)."""
        met = {"service_healthy": self.healthy, "service_completed_successfully": self.completed}
        problems = []
        for service, dependency, condition in self.edges:
            if condition not in met:
                continue
            when = met[condition].get(dependency)
            if when is None or self.started[service] < when:
                problems.append(f"{service} started before {dependency} was {condition}")
        return problems


class ComposeStack:
    """One compose project, built and run from the resolved compose file."""

    def __init__(self, workdir: Path, ports: Mapping[str, int]) -> None:
        self.workdir = workdir
        self.ports = dict(ports)
        self.env = podman_env(
            {**BASE_IMAGES, **{name: str(port) for name, port in self.ports.items()}}
        )
        self.resolved = workdir / "compose.resolved.yml"
        self.config: dict[str, Any] = {}
        self.scale: dict[str, int] = {}
        self.idle_memory: dict[str, str] = {}  # container -> memory in use, before any job

    # --- the compose file ------------------------------------------------------------------

    def resolve(self, scale: Mapping[str, int] | None = None) -> dict[str, Any]:
        """docker-compose.yml + the podman override, merged by Compose's own rules, without
        the services this machine cannot run; `scale` as the services' replica counts."""
        self.scale.update(scale or {})
        files = [argument for name in COMPOSE_FILES for argument in ("-f", name)]
        merged = run(
            ["docker-compose", "-p", PROJECT, *files, "--env-file", ".env.example", "config"],
            env=self.env,
        )
        config = yaml.safe_load(merged.stdout)
        services: dict[str, Any] = config["services"]
        for name in LEFT_OUT:
            services.pop(name, None)
        for service in services.values():
            build = service.get("build")
            if build and "target" in build:
                service["image"] = IMAGE_OF_TARGET.format(target=build["target"])
        for name, replicas in self.scale.items():
            services[name].setdefault("deploy", {})["replicas"] = replicas
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.resolved.write_text(yaml.safe_dump(config, sort_keys=False))
        self.config = config
        return config

    @property
    def services(self) -> dict[str, Any]:
        services: dict[str, Any] = self.config["services"]
        return services

    def depends_on(self, service: str) -> dict[str, str]:
        declared = self.services[service].get("depends_on") or {}
        if isinstance(declared, list):
            return {name: "service_started" for name in declared}
        return {name: spec.get("condition", "service_started") for name, spec in declared.items()}

    def start_order(self, services: Iterable[str] | None = None) -> list[str]:
        wanted = set(services or self.services)
        graph = {name: set(self.depends_on(name)) & wanted for name in wanted}
        return list(TopologicalSorter(graph).static_order())

    # --- images ----------------------------------------------------------------------------

    def build(self) -> dict[str, float]:
        """Builds every image of the resolved file (podman's layer cache makes a second build
        quick); returns seconds per image."""
        timings: dict[str, float] = {}
        for service in self.services.values():
            build, image = service.get("build"), service.get("image")
            if not build or image in timings:
                continue
            command = ["podman", "build", "--quiet", "--tag", image]
            if "dockerfile" in build:
                command += ["--file", str(Path(build["context"]) / build["dockerfile"])]
            if "target" in build:
                command += ["--target", build["target"]]
            for name, value in (build.get("args") or {}).items():
                command += ["--build-arg", f"{name}={value}"]
            started = time.monotonic()
            run([*command, build["context"]], env=self.env, timeout=1800)
            timings[image] = time.monotonic() - started
        return timings

    def image_sizes(self) -> dict[str, int]:
        images = {service["image"] for service in self.services.values()}
        sizes = {}
        for image in sorted(images):
            done = run(["podman", "image", "inspect", "--format", "{{.Size}}", image])
            sizes[image] = int(done.stdout.strip())
        return sizes

    # --- containers ------------------------------------------------------------------------

    def compose(
        self, *arguments: str, timeout: float = 600, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return run(
            ["podman-compose", "-p", PROJECT, "-f", str(self.resolved), *arguments],
            env=self.env,
            timeout=timeout,
            check=check,
        )

    def containers(self, service: str | None = None) -> list[Container]:
        filters = ["--filter", f"label=io.podman.compose.project={PROJECT}"]
        if service:
            filters += ["--filter", f"label=com.docker.compose.service={service}"]
        names = run(["podman", "ps", "-a", "--format", "{{.Names}}", *filters]).stdout.split()
        if not names:
            return []
        inspected = json.loads(run(["podman", "inspect", *names]).stdout)
        return [
            Container(
                name=item["Name"],
                service=item["Config"]["Labels"]["com.docker.compose.service"],
                hostname=item["Config"]["Hostname"],
                state=item["State"],
                restarts=int(item.get("RestartCount", 0)),
            )
            for item in inspected
        ]

    def healthy(self, container: str) -> bool:
        return run(["podman", "healthcheck", "run", container], check=False).returncode == 0

    def wait_healthy(self, service: str) -> float:
        """Runs the service's own health check on each of its containers until all pass;
        gives up after what Compose would allow (start period + retries x (interval +
        timeout)). Returns when they passed."""
        check = self.services[service].get("healthcheck") or {}
        if not check.get("test"):
            raise ComposeError(f"{service} has no health check to wait for")
        allowed = seconds(check.get("start_period"), 0) + int(check.get("retries", 3)) * (
            seconds(check.get("interval"), 30) + seconds(check.get("timeout"), 30)
        )
        deadline = time.monotonic() + allowed
        pending = {container.name for container in self.containers(service)}
        if not pending:
            raise ComposeError(f"{service} has no container")
        while pending:
            for name in sorted(pending):
                if self.healthy(name):
                    pending.discard(name)
            if pending and time.monotonic() > deadline:
                logs = {name: self.logs(name)[-2000:] for name in pending}
                raise ComposeError(f"{service}: not healthy within {allowed:.0f} s: {logs}")
            if pending:
                time.sleep(1)
        return time.time()

    def wait_completed(self, service: str, timeout: float = 300) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            containers = self.containers(service)
            if containers and all(c.state["Status"] == "exited" for c in containers):
                failed = [c for c in containers if c.state["ExitCode"] != 0]
                if failed:
                    raise ComposeError(
                        f"{service} exited {failed[0].state['ExitCode']}: "
                        f"{self.logs(failed[0].name)[-3000:]}"
                    )
                return time.time()
            time.sleep(1)
        raise ComposeError(f"{service} did not complete within {timeout:.0f} s")

    def one_shot(self, service: str) -> bool:
        """A service others wait for with `service_completed_successfully`."""
        return any(
            self.depends_on(other).get(service) == "service_completed_successfully"
            for other in self.services
        )

    def create(self) -> None:
        """Creates every container of the resolved file that does not exist yet, starting
        none: podman-compose 1.0.3's `up SERVICE` ignores `--no-deps` and would start (and
        so re-run) a finished one-shot again; existing containers are left as they are.
        Without `-d`: 1.0.3 hands it on to `podman create`, which refuses it."""
        self.compose("up", "--no-build", "--no-start", check=False)
        for name, service in self.services.items():
            replicas = int((service.get("deploy") or {}).get("replicas", 1))
            have = len(self.containers(name))
            if have != replicas:
                raise ComposeError(f"{name}: {have} containers created, {replicas} wanted")

    def up(self, services: Iterable[str] | None = None) -> StartLog:
        """Starts `services` (all by default) in the compose file's dependency order, each
        only once what it depends on meets the condition the file names; then waits for its
        own health check (or, for a one-shot, its exit 0), so each service's start-to-healthy
        time is its own."""
        self.create()
        log = StartLog()
        for service in self.start_order(services):
            for dependency, condition in self.depends_on(service).items():
                log.edges.append((service, dependency, condition))
                if condition == "service_healthy" and dependency not in log.healthy:
                    log.healthy[dependency] = self.wait_healthy(dependency)
                elif condition == "service_completed_successfully":
                    if dependency not in log.completed:
                        log.completed[dependency] = self.wait_completed(dependency)
            fresh = [c.name for c in self.containers(service) if c.state["Status"] == "created"]
            if fresh:
                run(["podman", "start", *fresh])
            log.started[service] = min(c.started_at for c in self.containers(service))
            if self.one_shot(service):
                log.completed[service] = self.wait_completed(service)
            elif (self.services[service].get("healthcheck") or {}).get("test"):
                log.healthy[service] = self.wait_healthy(service)
        return log

    def logs(self, container: str) -> str:
        done = run(["podman", "logs", container], check=False)
        return done.stdout + done.stderr

    def memory(self) -> dict[str, str]:
        names = [c.name for c in self.containers() if c.running]
        done = run(["podman", "stats", "--no-stream", "--format", "json", *names])
        return {item["name"]: item["mem_usage"].split(" / ")[0] for item in json.loads(done.stdout)}

    def save_logs(self, directory: Path) -> None:
        """Every container's log, for reading after the stack is gone."""
        directory.mkdir(parents=True, exist_ok=True)
        for container in self.containers():
            (directory / f"{container.name}.log").write_text(self.logs(container.name))

    def down(self) -> None:
        """`down -v`: containers and named volumes, then the project's network, which
        podman-compose 1.0.3's `down` leaves behind (Docker Compose removes it)."""
        if self.resolved.exists():
            self.compose("down", "-v", timeout=300)
        for network in self.leftovers().get("networks", []):
            run(["podman", "network", "rm", "--force", network])

    def leftovers(self) -> dict[str, list[str]]:
        label = f"label=io.podman.compose.project={PROJECT}"
        listing = {
            "containers": ["podman", "ps", "-a", "--format", "{{.Names}}", "--filter", label],
            "volumes": ["podman", "volume", "ls", "--format", "{{.Name}}", "--filter", label],
            "networks": ["podman", "network", "ls", "--format", "{{.Name}}"],
        }
        found = {kind: run(command).stdout.split() for kind, command in listing.items()}
        found["networks"] = [name for name in found["networks"] if name.startswith(PROJECT)]
        return {kind: names for kind, names in found.items() if names}
