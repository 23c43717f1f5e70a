"""The broker of the compose stack: infra/rabbitmq/rabbitmq.conf loads the topology file the
compose file mounts, and the credentials the services use exist in the broker.

That infra/rabbitmq/definitions.json equals what jobs_common.topology declares is checked once,
in libs/common/tests/unit/test_topology_unit.py (test_committed_definitions_json_matches_the_
topology_module); the guard below keeps that reference true."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from .deploy_files import (
    RABBITMQ_DIR,
    ROOT,
    environment,
    interpolate,
    load_compose,
    read_env_file,
)

pytestmark = pytest.mark.unit

CONF = RABBITMQ_DIR / "rabbitmq.conf"
DEFINITIONS = RABBITMQ_DIR / "definitions.json"
TOPOLOGY_TEST = ROOT / "libs" / "common" / "tests" / "unit" / "test_topology_unit.py"


def read_conf(text: str) -> dict[str, str]:
    """rabbitmq.conf (sysctl format): key = value lines, # comments."""
    values = {}
    for line in text.splitlines():
        stripped = line.split("#", 1)[0].strip()
        if stripped:
            key, sep, value = stripped.partition("=")
            assert sep, f"not key = value: {line!r}"
            values[key.strip()] = value.strip()
    return values


def mounts(compose: dict[str, Any]) -> dict[str, str]:
    """The rabbitmq service's bind mounts: repository path -> container path."""
    found = {}
    for volume in compose["services"]["rabbitmq"].get("volumes") or []:
        source, target, *_ = str(volume).split(":")
        if source.startswith("./"):
            found[source[2:]] = target
    return found


def broker_problems(
    conf_text: str, compose: dict[str, Any], definitions: dict[str, Any]
) -> list[str]:
    problems = []
    conf = read_conf(conf_text)
    mounted = mounts(compose)
    definitions_path = mounted.get("infra/rabbitmq/definitions.json")
    conf_path = mounted.get("infra/rabbitmq/rabbitmq.conf")
    if definitions_path is None:
        problems.append("definitions.json is not mounted")
    if conf_path is None or not (
        conf_path.startswith("/etc/rabbitmq/conf.d/") and conf_path.endswith(".conf")
    ):
        problems.append(f"rabbitmq.conf mounted at {conf_path}, not as a conf.d/*.conf file")
    elif conf_path.rsplit("/", 1)[1] <= "10-defaults.conf":
        problems.append(f"{conf_path} is read before the image's 10-defaults.conf")
    if conf.get("management.load_definitions") != definitions_path:
        problems.append(
            f"management.load_definitions = {conf.get('management.load_definitions')}, "
            f"the file is mounted at {definitions_path}"
        )
    if "load_definitions" in conf:
        problems.append("core load_definitions stops the node from seeding its default user")

    env = environment(compose["services"]["rabbitmq"])
    users = {user["name"]: user for user in definitions.get("users", [])}
    default_user = env.get("RABBITMQ_DEFAULT_USER", "guest")
    default_pass = env.get("RABBITMQ_DEFAULT_PASS", "guest")
    if default_user in users and users[default_user].get("password") != default_pass:
        problems.append(f"definitions.json resets {default_user}'s password on every boot")
    if "guest" in users or default_user == "guest":
        if conf.get("loopback_users.guest") != "false" and conf.get("loopback_users") != "none":
            problems.append("guest may log in from localhost only: the services are elsewhere")

    vhosts = {vhost["name"] for vhost in definitions.get("vhosts", [])}
    for name, spec in compose["services"].items():
        for key, value in environment(spec).items():
            parts = urlsplit(value)
            if parts.scheme != "amqp":
                continue
            vhost = unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
            if vhost not in vhosts:
                problems.append(f"{name}: {key} uses vhost {vhost!r}, not in definitions.json")
            if (parts.username, parts.password) != (default_user, default_pass):
                problems.append(f"{name}: {key} logs in as someone the broker does not know")
    return problems


def test_the_broker_loads_the_mounted_topology_and_knows_the_services_users() -> None:
    compose = interpolate(load_compose(), read_env_file())
    definitions = json.loads(DEFINITIONS.read_text())
    assert broker_problems(CONF.read_text(), compose, definitions) == []


def test_with_a_user_of_ones_own_too() -> None:
    compose = interpolate(
        load_compose(), read_env_file() | {"RABBITMQ_USER": "jobs", "RABBITMQ_PASSWORD": "s3cret"}
    )
    definitions = json.loads(DEFINITIONS.read_text())
    assert broker_problems(CONF.read_text(), compose, definitions) == []


def test_definitions_json_is_checked_against_the_topology_module_in_libs_common() -> None:
    assert "def test_committed_definitions_json_matches_the_topology_module" in (
        TOPOLOGY_TEST.read_text()
    )


def test_broker_problems_are_found() -> None:
    compose = interpolate(load_compose(), read_env_file())
    definitions = json.loads(DEFINITIONS.read_text())
    conf = CONF.read_text()
    moved = conf.replace(
        "management.load_definitions = /etc/rabbitmq/definitions.json",
        "management.load_definitions = /etc/rabbitmq/topology.json",
    )
    assert moved != conf
    assert broker_problems(moved, compose, definitions) == [
        "management.load_definitions = /etc/rabbitmq/topology.json, "
        "the file is mounted at /etc/rabbitmq/definitions.json"
    ]
    core = conf + "\nload_definitions = /etc/rabbitmq/definitions.json\n"
    assert broker_problems(core, compose, definitions) == [
        "core load_definitions stops the node from seeding its default user"
    ]
    local_only = conf.replace("loopback_users.guest = false", "")
    assert broker_problems(local_only, compose, definitions) == [
        "guest may log in from localhost only: the services are elsewhere"
    ]
    guest_other = interpolate(load_compose(), read_env_file() | {"RABBITMQ_PASSWORD": "changed"})
    assert broker_problems(conf, guest_other, definitions) == [
        "definitions.json resets guest's password on every boot"
    ]
