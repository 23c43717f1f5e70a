"""The short version of `make test-compose`, run by `make test`: docker-compose.yml, resolved with
the podman override and scaled (worker=3, scheduler=2), is translated by podman-compose
itself (`--dry-run`, every podman command recorded, nothing run) and each container's
command is checked against the file: every replica is created, each health check reaches
podman as the command line the file wrote, restart policies and published ports as written.
Building the images and running the stack is `make test-compose` (docs/operations.md)."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .stack import PROJECT, ROOT, ComposeStack, podman_env

pytestmark = pytest.mark.unit

# Runs podman-compose's own code with its podman calls recorded instead of printed.
RECORDER = """
import json, sys
import podman_compose

calls = []

def record(self, podman_args, cmd="", cmd_args=None, wait=True, sleep=1, obj=None):
    calls.append([*podman_args, cmd, *map(str, cmd_args or [])])

podman_compose.Podman.run = record
output, sys.argv = sys.argv[1], ["podman-compose", *sys.argv[2:]]
try:
    podman_compose.main()
finally:
    with open(output, "w") as handle:
        json.dump(calls, handle)
"""
SCALE = {"worker": 3, "scheduler": 2}
PUBLISHED = {"gateway", "rabbitmq", "mailpit", "prometheus"}


def option(argv: list[str], name: str) -> str | None:
    """The value of `--name value` or `--name=value` in a podman command line."""
    for index, word in enumerate(argv):
        if word == name:
            return argv[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


@pytest.fixture(scope="module")
def translated(tmp_path_factory: pytest.TempPathFactory) -> tuple[ComposeStack, dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("compose")
    ports = {"HTTP_PORT": 3000, "RABBITMQ_CONSOLE_PORT": 15672, "PROMETHEUS_PORT": 9090}
    stack = ComposeStack(workdir, {**ports, "MAIL_UI_PORT": 8025})
    stack.resolve(scale=SCALE)
    recorded = workdir / "calls.json"
    command = ["--dry-run", "-p", PROJECT, "-f", str(stack.resolved), "up", "--no-start"]
    done = subprocess.run(
        ["/usr/bin/python3", "-c", RECORDER, str(recorded), *command],
        cwd=ROOT,
        env=podman_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    creates = {}
    for call in json.loads(Path(recorded).read_text()):
        if call[0] == "create":
            argv = call[1:]
            creates[option(argv, "--name")] = argv
    return stack, creates


def test_every_replica_of_every_service_is_created(
    translated: tuple[ComposeStack, dict[str, Any]],
) -> None:
    stack, creates = translated
    wanted = {
        f"{PROJECT}_{name}_{number}"
        for name in stack.services
        for number in range(1, SCALE.get(name, 1) + 1)
    }
    assert set(creates) == wanted


def service_of(argv: list[str]) -> str:
    return next(
        label.split("=", 1)[1]
        for previous, label in itertools.pairwise(argv)
        if previous == "--label" and label.startswith("com.docker.compose.service=")
    )


def test_health_checks_restart_policies_and_ports_reach_podman_as_written(
    translated: tuple[ComposeStack, dict[str, Any]],
) -> None:
    stack, creates = translated
    for name, argv in creates.items():
        service_name = service_of(argv)
        service = stack.services[service_name]
        assert option(argv, "--restart") == service.get("restart"), name
        assert (option(argv, "-p") is not None) == (service_name in PUBLISHED), name
        test = (service.get("healthcheck") or {}).get("test")
        command = option(argv, "--healthcheck-command")
        if test is None:
            assert command is None, name
        else:
            # What podman runs: /bin/sh -c <the file's line> ($$ is Compose's escape of $).
            line = test.replace("$$", "$")
            assert command is not None and shlex.split(command) == ["/bin/sh", "-c", line], name
