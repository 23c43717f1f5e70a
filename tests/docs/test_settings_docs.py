"""The settings the docs name are the settings the code reads, both ways.

- Every environment variable a service reads (each field of its settings classes, inherited
  ones included, and any literal ``os.environ`` read in its code) is a row of its settings
  table.
- Every name in the README or docs/ that looks like a service's variable
  (``GATEWAY_...``, ``WORKER_...``) is one of that service's settings, or on the allow-list
  below with the reason.
- Every variable ``make dev`` (scripts/dev.py) reads is in the table under "Running" in
  docs/operations.md.
"""

from __future__ import annotations

import fnmatch
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from .environment import (
    SERVICES,
    Variable,
    environ_reads,
    is_variable,
    prefix_of,
    service_variables,
    settings_variables,
)
from .markdown_docs import DOC_FILES, ROOT, env_like_names, section, settings_table_names

pytestmark = pytest.mark.unit

# Where each service's settings table is: (page, the heading its section starts with). The
# scheduler's page has none: docs/operations.md, "Settings", keeps its table, with the names
# after the `SCHEDULER_` its header gives.
SETTINGS_TABLES = {
    "gateway": ("docs/gateway.md", "Settings"),
    "submission": ("docs/submission.md", "Settings"),
    "scheduler": ("docs/operations.md", "Settings"),
    "dashboard": ("docs/dashboard.md", "Settings"),
    "worker": ("docs/worker.md", "Settings"),
}

# Names that look like a service's variable and are not: name -> (the file that reads it, why
# it is not a setting). The file must still mention the name, so an entry cannot outlive it.
NOT_SETTINGS = {
    # Read by the Vite dev server (`npm run dev`), whose proxy sends /api, /auth and /ws
    # there: the address of a gateway, not a setting of one.
    "GATEWAY_URL": ("frontend/vite.config.ts", "the UI dev server's proxy target"),
    # A `make chaos` knob: how long the chaos run freezes a scheduler replica (SIGSTOP).
    "SCHEDULER_PAUSE_SECONDS": ("scripts/chaos/knobs.py", "a make chaos knob"),
}

DEV_SCRIPT = Path("scripts/dev.py")
DEV_TABLE = ("docs/operations.md", "Running")


def read(path: str | Path) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def settings_table(service: str, prefix: str) -> set[str]:
    page, heading = SETTINGS_TABLES[service]
    return settings_table_names(section(read(page), heading), prefix)


# The checks, on text and names so that a broken snippet can be fed to them.


def undocumented(where: str, variables: Mapping[str, Variable], documented: set[str]) -> list[str]:
    """Variables the code reads that the settings table does not list."""
    return [
        f"{where}: {name} is read by the code and missing from the settings table"
        for name in sorted(set(variables) - documented)
    ]


def unknown_names(
    path: Path | str,
    text: str,
    variables: Mapping[str, Mapping[str, Variable]],
    allowed: Mapping[str, object] = NOT_SETTINGS,
) -> list[str]:
    """Names in ``text`` that look like a variable of a prefix in ``variables`` (prefix ->
    that service's variables) and are none of its settings. A pattern (``SCHEDULER_RETRY_*``)
    must match at least one."""
    problems = []
    for line, name in env_like_names(text, variables):
        if name in allowed:
            continue
        prefix = next(p for p in variables if name.startswith(p))
        known = variables[prefix]
        if "*" in name:
            ok = any(fnmatch.fnmatchcase(v, name) for v in known)
        else:
            ok = is_variable(name, known)
        if not ok:
            problems.append(f"{path}:{line}: {name} is not a setting of {prefix}*")
    return problems


def unlisted_reads(script: str, reads: set[str], listed: set[str]) -> list[str]:
    return [
        f"{script} reads {name}, which the table does not list" for name in sorted(reads - listed)
    ]


# The docs.


@pytest.fixture(scope="module")
def variables_by_prefix() -> dict[str, dict[str, Variable]]:
    return {prefix_of(service): service_variables(service) for service in SERVICES}


@pytest.mark.parametrize("service", SERVICES)
def test_every_variable_a_service_reads_is_in_its_settings_table(service: str) -> None:
    prefix = prefix_of(service)
    page, heading = SETTINGS_TABLES[service]
    documented = settings_table(service, prefix)
    assert documented, f"{page}: no settings table under a heading starting with {heading!r}"
    assert undocumented(f"{page} ({service})", service_variables(service), documented) == []


@pytest.mark.parametrize("page", DOC_FILES, ids=str)
def test_every_variable_the_docs_name_is_a_setting(
    page: Path, variables_by_prefix: dict[str, dict[str, Variable]]
) -> None:
    assert unknown_names(page, read(page), variables_by_prefix) == []


@pytest.mark.parametrize("name", sorted(NOT_SETTINGS))
def test_each_allowed_name_is_read_where_the_allow_list_says_and_is_no_setting(
    name: str, variables_by_prefix: dict[str, dict[str, Variable]]
) -> None:
    reader, _ = NOT_SETTINGS[name]
    assert name in read(reader), f"{reader} no longer mentions {name}: drop it from NOT_SETTINGS"
    assert not any(is_variable(name, known) for known in variables_by_prefix.values()), (
        f"{name} is a setting now: drop it from NOT_SETTINGS"
    )


def test_every_variable_make_dev_reads_is_in_the_running_table() -> None:
    page, heading = DEV_TABLE
    reads = environ_reads(ROOT / DEV_SCRIPT)
    assert {"DEV_DATABASE", "POSTGRES_URL", "AMQP_URL"} <= reads  # the scan finds them
    listed = settings_table_names(section(read(page), heading), "")
    assert unlisted_reads(str(DEV_SCRIPT), reads, listed) == []


# Each check fails on a broken doc.


def test_a_variable_missing_from_a_settings_table_is_reported() -> None:
    table = textwrap.dedent(
        """\
        ## Settings

        | variable | default |
        |---|---|
        | `DASHBOARD_HOST` / `DASHBOARD_PORT` | `127.0.0.1` / `8081` |
        """
    )
    variables = {
        name: Variable(name)
        for name in ("DASHBOARD_HOST", "DASHBOARD_PORT", "DASHBOARD_CANCEL_RECORD_WAIT_SECONDS")
    }
    documented = settings_table_names(section(table, "Settings"), "DASHBOARD_")
    assert undocumented("dashboard.md", variables, documented) == [
        "dashboard.md: DASHBOARD_CANCEL_RECORD_WAIT_SECONDS is read by the code and missing "
        "from the settings table"
    ]


def test_a_table_row_outside_the_settings_section_does_not_count() -> None:
    page = textwrap.dedent(
        """\
        ## Limits

        | `SCHEDULER_DB_POOL_SIZE` | 10 |
        |---|---|

        ## Settings

        | variable | default |
        |---|---|
        | `SCHEDULER_PORT` | 8080 |
        """
    )
    assert settings_table_names(section(page, "Settings"), "SCHEDULER_") == {"SCHEDULER_PORT"}


def test_shortened_and_header_prefixed_names_are_read_in_full() -> None:
    page = textwrap.dedent(
        """\
        | variable | default |
        |---|---|
        | `WORKER_PREFETCH_HIGH` / `_MEDIUM` / `_LOW` | 20 / 10 / 5 |
        | `WORKER_RELAY_RETRY_BASE_SECONDS` / `..._RETRY_MAX_SECONDS` | 1 / 30 |
        | `WORKER_SMTP_HOST` / `_PORT` | |

        | setting (`WORKER_`) | default |
        |---|---|
        | `DATABASE_URL`, `AMQP_URL` | local |
        | `MAX_ATTEMPTS_BY_TYPE` (JSON) | `{}` |
        """
    )
    assert settings_table_names(page, "WORKER_") == {
        "WORKER_PREFETCH_HIGH",
        "WORKER_PREFETCH_MEDIUM",
        "WORKER_PREFETCH_LOW",
        "WORKER_RELAY_RETRY_BASE_SECONDS",
        "WORKER_RELAY_RETRY_MAX_SECONDS",
        "WORKER_SMTP_HOST",
        "WORKER_SMTP_PORT",
        "WORKER_DATABASE_URL",
        "WORKER_AMQP_URL",
        "WORKER_MAX_ATTEMPTS_BY_TYPE",
    }


def test_a_name_that_is_no_setting_of_its_prefix_is_reported() -> None:
    text = textwrap.dedent(
        """\
        A worker is dead past `WORKER_DEAD_AFTER_SECONDS`; `DASHBOARD_WORKER_DEAD_AFTER_SECONDS`
        is the dashboard's. `SCHEDULER_RETRY_*` and `SCHEDULER_NOTHING_*` are families,
        `GATEWAY_URL` is allowed, `SCHEDULER_MAX_ATTEMPTS_BY_TYPE__EMAIL=5` a nested key.
        """
    )
    variables = {
        "DASHBOARD_": {
            "DASHBOARD_WORKER_DEAD_AFTER_SECONDS": Variable("DASHBOARD_WORKER_DEAD_AFTER_SECONDS")
        },
        "WORKER_": {"WORKER_HEARTBEAT_INTERVAL": Variable("WORKER_HEARTBEAT_INTERVAL")},
        "SCHEDULER_": {
            "SCHEDULER_RETRY_JITTER": Variable("SCHEDULER_RETRY_JITTER"),
            "SCHEDULER_MAX_ATTEMPTS_BY_TYPE": Variable("SCHEDULER_MAX_ATTEMPTS_BY_TYPE", "__"),
        },
        "GATEWAY_": {},
    }
    assert unknown_names("dashboard.md", text, variables) == [
        "dashboard.md:1: WORKER_DEAD_AFTER_SECONDS is not a setting of WORKER_*",
        "dashboard.md:2: SCHEDULER_NOTHING_* is not a setting of SCHEDULER_*",
    ]


def test_a_variable_make_dev_reads_that_the_table_misses_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "dev.py"
    script.write_text(
        textwrap.dedent(
            """\
            import os
            from os import environ, getenv
            DATABASE = os.environ.get("DEV_DATABASE", "jobs")
            URL = os.environ["POSTGRES_URL"]
            AMQP = getenv("AMQP_URL")
            MONGO = environ.get("MONGO_URL")
            os.environ.setdefault("DEMO", "1")
            name = "NOT_A_READ"
            """
        )
    )
    reads = environ_reads(script)
    assert reads == {"DEV_DATABASE", "POSTGRES_URL", "AMQP_URL", "MONGO_URL", "DEMO"}
    table = textwrap.dedent(
        """\
        ## Running

        | variable | default |
        |---|---|
        | `DEV_DATABASE` | `jobs` |
        | `POSTGRES_URL` / `AMQP_URL` | local |
        | `MONGO_URL` | unset |
        """
    )
    listed = settings_table_names(section(table, "Running"), "")
    assert unlisted_reads("dev.py", reads, listed) == [
        "dev.py reads DEMO, which the table does not list"
    ]


def test_settings_variables_follow_prefix_alias_and_nesting() -> None:
    class Toy(BaseSettings):
        model_config = SettingsConfigDict(env_prefix="TOY_", env_nested_delimiter="__")

        port: int = 1
        limits: dict[str, int] = {}
        token: str = Field(default="", validation_alias=AliasChoices("TOY_TOKEN", "OLD_TOKEN"))

    variables = settings_variables(Toy)
    assert set(variables) == {"TOY_PORT", "TOY_LIMITS", "TOY_TOKEN", "OLD_TOKEN"}
    assert is_variable("TOY_LIMITS__EMAIL", variables)
    assert not is_variable("TOY_PORT__X", variables)


def test_inherited_fields_are_read_too() -> None:
    # The common base (jobs_common.settings.ServiceSettings) gives every service these.
    for service in SERVICES:
        prefix = prefix_of(service)
        assert {f"{prefix}LIVENESS_INTERVAL_SECONDS", f"{prefix}LOG_LEVEL"} <= set(
            service_variables(service)
        )
