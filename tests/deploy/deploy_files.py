"""Readers of the deployment files for tests/deploy: docker-compose.yml (with Compose's variable
interpolation), .env.example, infra/docker/Dockerfile and .dockerignore. No Docker engine is
needed: everything here reads files."""

from __future__ import annotations

import importlib
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic.fields import FieldInfo

from jobs_common.settings import ServiceSettings
from jobs_sdk import HandlerConfig

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERFILE = ROOT / "infra" / "docker" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
SCHEMA_DIR = ROOT / "infra" / "docker" / "compose-spec"
RABBITMQ_DIR = ROOT / "infra" / "rabbitmq"

# The five services, each a build target of the Dockerfile and a package jobs_<name>.
SERVICES = ("gateway", "submission", "scheduler", "dashboard", "worker")


# --- Compose ---------------------------------------------------------------------------------

# $$ (a literal $), ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error},
# ${NAME:+alternative}, ${NAME+alternative}, $NAME. Nested interpolation is not used here.
VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}"
    r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)


@dataclass(frozen=True)
class Reference:
    name: str
    op: str | None  # None, "-", ":-", "?", ":?", "+", ":+"
    arg: str | None


def references(text: str) -> list[Reference]:
    """Every variable reference in ``text`` (escaped ``$$`` excluded)."""
    found = []
    for match in VARIABLE.finditer(text):
        if match["escaped"]:
            continue
        name = match["braced"] or match["bare"]
        found.append(Reference(name, match["op"], match["arg"]))
    return found


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """``value`` with every string interpolated the way Compose does it (strictly: an unset
    variable without a default is an error here, where Compose only warns)."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        name = match["braced"] or match["bare"]
        op, arg = match["op"], match["arg"] or ""
        current = env.get(name)
        is_set = current is not None
        non_empty = bool(current)
        if op in ("-", ":-"):
            use = non_empty if op == ":-" else is_set
            return current if use and current is not None else arg
        if op in ("?", ":?"):
            if (op == ":?" and not non_empty) or not is_set:
                raise KeyError(f"{name}: {arg}")
            return current or ""
        if op in ("+", ":+"):
            use = non_empty if op == ":+" else is_set
            return arg if use else ""
        if current is None:
            raise KeyError(f"{name} is not set and has no default")
        return current

    return VARIABLE.sub(substitute, value)


def load_yaml(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict), f"{path} is not a mapping"
    return document


def load_compose(path: Path = COMPOSE_FILE) -> dict[str, Any]:
    return load_yaml(path)


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    """A service's ``environment`` as a mapping (it may be written as a list of NAME=value)."""
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        pairs = (item.split("=", 1) for item in raw)
        return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}
    return {key: "" if value is None else str(value) for key, value in raw.items()}


def depends_on(service: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    raw = service.get("depends_on") or {}
    if isinstance(raw, list):
        return {name: {} for name in raw}
    return {name: dict(spec or {}) for name, spec in raw.items()}


def build_target(service: Mapping[str, Any]) -> str | None:
    build = service.get("build")
    if isinstance(build, dict):
        target = build.get("target")
        return str(target) if target is not None else None
    return None


def read_env_file(path: Path = ENV_EXAMPLE) -> dict[str, str]:
    """NAME=value lines (comments and blank lines skipped, no quoting used)."""
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name, sep, value = stripped.partition("=")
        assert sep, f"{path.name}:{number}: not NAME=value: {line!r}"
        assert name not in values, f"{path.name}:{number}: {name} listed twice"
        values[name] = value
    return values


# --- Settings of the services ------------------------------------------------------------------


def settings_class(service: str) -> type[ServiceSettings]:
    module = importlib.import_module(f"jobs_{service}.settings")
    cls: object = module.Settings
    assert isinstance(cls, type) and issubclass(cls, ServiceSettings)
    return cls


def handler_configs(service: str) -> list[type[HandlerConfig]]:
    """The worker's built-in handlers' own configuration models (read with its prefix)."""
    if service != "worker":
        return []
    module = importlib.import_module("jobs_worker.handlers.config")
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, HandlerConfig)
        and value is not HandlerConfig
    ]


def environment_fields(service: str) -> dict[str, FieldInfo]:
    """Every field a container of ``service`` reads from its prefixed variables: its Settings'
    and (the worker's) its built-in handlers' configuration."""
    fields = dict(settings_class(service).model_fields)
    for config in handler_configs(service):
        assert config.env_prefix() == env_prefix(settings_class(service)), config
        fields.update(config.model_fields)
    return fields


def env_prefix(cls: type[ServiceSettings]) -> str:
    prefix = cls.model_config.get("env_prefix")
    assert isinstance(prefix, str) and prefix, f"{cls} has no env prefix"
    return prefix


PREFIXES = {service: env_prefix(settings_class(service)) for service in SERVICES}


# --- Dockerfile --------------------------------------------------------------------------------


@dataclass
class Stage:
    name: str
    base: str  # the FROM argument, ARGs substituted
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, keyword: str) -> list[str]:
        return [argument for kw, argument in self.instructions if kw == keyword]


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: dict[str, Stage]

    def chain(self, name: str) -> list[Stage]:
        """The stage and the stages it is built FROM, the stage itself first."""
        chain = [self.stages[name]]
        while chain[-1].base in self.stages:
            chain.append(self.stages[chain[-1].base])
        return chain

    def image(self, name: str) -> str:
        """The image a stage finally starts from."""
        return self.chain(name)[-1].base

    def env(self, name: str) -> dict[str, str]:
        """ENV as set in the stage (inherited from the stages it is built from)."""
        values: dict[str, str] = {}
        for stage in reversed(self.chain(name)):
            for argument in stage.args("ENV"):
                values.update(key_values(argument))
        return values

    def user(self, name: str) -> str | None:
        user = None
        for stage in reversed(self.chain(name)):
            for argument in stage.args("USER"):
                user = argument.strip()
        return user

    def copied_from(self, name: str) -> set[str]:
        """Stages whose files COPY --from brings into this stage (or the ones it builds on)."""
        sources = set()
        for stage in self.chain(name):
            for argument in stage.args("COPY"):
                match = re.search(r"--from=(\S+)", argument)
                if match and match[1] in self.stages:
                    sources.add(match[1])
        return sources

    def contributors(self, name: str) -> list[Stage]:
        """Every stage whose work ends up in ``name``: its chain and, recursively, the chains
        of the stages it copies from."""
        seen: dict[str, Stage] = {}
        pending = [name]
        while pending:
            current = pending.pop()
            for stage in self.chain(current):
                if stage.name not in seen:
                    seen[stage.name] = stage
                    pending.extend(self.copied_from(stage.name))
        return list(seen.values())


def logical_lines(text: str) -> Iterator[str]:
    """Instructions with their continuation lines joined; comment lines dropped."""
    buffer = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not buffer):
            continue
        if line.endswith("\\"):
            buffer += line[:-1].rstrip() + " "
            continue
        buffer += line
        if buffer.strip():
            yield buffer.strip()
        buffer = ""
    if buffer.strip():
        yield buffer.strip()


def substitute_args(text: str, args: Mapping[str, str]) -> str:
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: args.get(m[1], m[0]), text)


def key_values(argument: str) -> dict[str, str]:
    """ENV/ARG arguments: NAME=value pairs (shell-quoted), or the legacy ``NAME value`` form."""
    parts = shlex.split(argument)
    if parts and "=" not in parts[0]:
        return {parts[0]: " ".join(parts[1:])}
    values = {}
    for part in parts:
        name, _, value = part.partition("=")
        values[name] = value
    return values


def parse_dockerfile(text: str) -> Dockerfile:
    global_args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    current: Stage | None = None
    for line in logical_lines(text):
        keyword, _, argument = line.partition(" ")
        keyword = keyword.upper()
        argument = argument.strip()
        if keyword == "FROM":
            words = argument.split()
            words = [word for word in words if not word.startswith("--")]
            base = substitute_args(words[0], global_args)
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else f"#{len(stages)}"
            current = Stage(name=name, base=base)
            stages[name] = current
        elif current is None:
            if keyword == "ARG":
                global_args.update(key_values(argument))
        else:
            current.instructions.append((keyword, argument))
    return Dockerfile(global_args, stages)


def load_dockerfile(path: Path = DOCKERFILE) -> Dockerfile:
    return parse_dockerfile(path.read_text())


# --- .dockerignore -----------------------------------------------------------------------------


def ignore_patterns(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(negated, regex) per .dockerignore line, in order (Docker's syntax: ``*``, ``?``,
    ``**`` for any number of directories, ``!`` to re-include)."""
    patterns = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        line = line.lstrip("!").strip().strip("/")
        regex = ""
        index = 0
        while index < len(line):
            if line.startswith("**/", index):
                regex += "(?:.*/)?"
                index += 3
            elif line.startswith("**", index):
                regex += ".*"
                index += 2
            elif line[index] == "*":
                regex += "[^/]*"
                index += 1
            elif line[index] == "?":
                regex += "[^/]"
                index += 1
            elif line[index] == "[":
                end = line.index("]", index)
                regex += line[index : end + 1]
                index = end + 1
            else:
                regex += re.escape(line[index])
                index += 1
        patterns.append((negated, re.compile(regex + r"\Z")))
    return patterns


def ignored(path: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether the build context leaves ``path`` out (a pattern matching one of its parent
    directories leaves out everything below it; the last matching pattern wins)."""
    parts = path.strip("/").split("/")
    prefixes = ["/".join(parts[: index + 1]) for index in range(len(parts))]
    excluded = False
    for negated, regex in patterns:
        if any(regex.match(prefix) for prefix in prefixes):
            excluded = not negated
    return excluded
