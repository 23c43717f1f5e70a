"""docker-compose.yml passes `docker-compose config` (Debian's docker-compose, installed by
scripts/ensure-infra.sh; no Docker engine needed). A missing binary fails the test: run
`make infra` (or `apt-get install docker-compose`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .deploy_files import COMPOSE_FILE, ENV_EXAMPLE

pytestmark = pytest.mark.unit

BINARY = "docker-compose"


def docker_compose() -> str:
    path = shutil.which(BINARY)
    if path is None:
        pytest.fail(
            "docker-compose is not installed: `make infra` installs Debian's package "
            "(scripts/ensure-infra.sh); the compose file cannot be checked without it"
        )
    return path


def compose_config(compose_file: Path, env_file: Path) -> subprocess.CompletedProcess[str]:
    """`docker-compose config` in a clean environment, so no shell variable leaks in."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    return subprocess.run(
        [
            docker_compose(),
            "--project-directory",
            str(compose_file.parent),
            "--env-file",
            str(env_file),
            "-f",
            str(compose_file),
            "config",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def resolved(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, f"docker-compose config failed:\n{result.stderr}"
    # Compose warns (and carries on) about unset variables and ignored keys: none expected.
    assert "WARNING" not in result.stderr, result.stderr
    document = yaml.safe_load(result.stdout)
    assert isinstance(document, dict)
    return document


def test_compose_file_passes_docker_compose_config_with_env_example() -> None:
    document = resolved(compose_config(COMPOSE_FILE, ENV_EXAMPLE))
    assert {"gateway", "submission", "scheduler", "dashboard", "worker"} <= set(
        document["services"]
    )


def test_compose_file_needs_no_env_file(tmp_path: Path) -> None:
    """Every variable has a default, equal to .env.example's: the same configuration results
    without any .env, so `docker compose up --build` works on a fresh clone."""
    empty = tmp_path / "empty.env"
    empty.write_text("")
    with_example = resolved(compose_config(COMPOSE_FILE, ENV_EXAMPLE))
    without = resolved(compose_config(COMPOSE_FILE, empty))
    assert without == with_example


def test_docker_compose_config_rejects_a_broken_file(tmp_path: Path) -> None:
    """The check above can fail: an unknown depends_on condition is refused."""
    text = COMPOSE_FILE.read_text()
    assert "condition: service_healthy" in text
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(text.replace("condition: service_healthy", "condition: service_ready", 1))
    result = compose_config(broken, ENV_EXAMPLE)
    assert result.returncode != 0
    assert "service_ready" in result.stderr
