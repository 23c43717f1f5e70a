"""The environment variables the code reads: each service's settings classes (as
pydantic-settings maps their fields to names) and any ``os.environ`` read in its source."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import AliasChoices, AliasPath, BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from jobs_sdk import HandlerConfig

from .markdown_docs import ROOT

SERVICES = ("gateway", "submission", "scheduler", "dashboard", "worker")


@dataclass(frozen=True)
class Variable:
    name: str
    # A dict or model: pydantic-settings also reads NAME<delimiter>KEY (env_nested_delimiter).
    nested_delimiter: str | None = None


def settings_classes(module_name: str) -> list[type[BaseSettings]]:
    """Every settings class the module defines (the gateway has two: the one-shot
    migration's and the service's)."""
    module = importlib.import_module(module_name)
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseSettings) and cls.__module__ == module_name
    ]


def _alias_names(alias: Any) -> list[str]:
    if isinstance(alias, str):
        return [alias]
    if isinstance(alias, AliasChoices):
        return [name for choice in alias.choices for name in _alias_names(choice)]
    if isinstance(alias, AliasPath):
        return [str(alias.path[0])]
    return []


def _is_complex(annotation: Any) -> bool:
    """A field pydantic-settings decodes as JSON and fills from nested variables."""
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return True
    origin = get_origin(annotation)
    if origin is dict:
        return True
    return any(_is_complex(arg) for arg in get_args(annotation) if arg is not type(None))


def field_variables(cls: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    """The names pydantic-settings reads a field from: its alias(es) as they are, or the
    class's ``env_prefix`` + the field's name; upper case (variables are matched without
    regard to case unless ``case_sensitive``, and the docs write them in upper case)."""
    config = cls.model_config
    aliases = _alias_names(field.validation_alias) or _alias_names(field.alias)
    names = aliases or [f"{config.get('env_prefix', '')}{name}"]
    return [n if config.get("case_sensitive") else n.upper() for n in names]


def settings_variables(cls: type[BaseSettings]) -> dict[str, Variable]:
    """Every variable a settings class reads (inherited fields included), by name."""
    delimiter = cls.model_config.get("env_nested_delimiter")
    found = {}
    for name, field in cls.model_fields.items():
        nested = delimiter if delimiter and _is_complex(field.annotation) else None
        for variable in field_variables(cls, name, field):
            found[variable] = Variable(variable, nested)
    return found


def environ_reads(path: Path) -> set[str]:
    """Names a module reads from the environment with a literal: ``os.environ[...]``,
    ``os.environ.get(...)``, ``os.environ.setdefault(...)``, ``os.getenv(...)``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            if (
                isinstance(function, ast.Attribute)
                and function.attr in {"get", "setdefault", "pop"}
                and _is_environ(function.value)
            ) or (isinstance(function, ast.Attribute) and function.attr == "getenv"):
                key = node.args[0]
            elif isinstance(function, ast.Name) and function.id == "getenv":
                key = node.args[0]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.add(key.value)
    return found


def _is_environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def service_source(service: str) -> Path:
    return ROOT / "services" / service / "src" / f"jobs_{service}"


def handler_config_variables(service: str) -> dict[str, Variable]:
    """The variables the worker's built-in handlers read (their ``HandlerConfig`` models, in
    ``jobs_worker.handlers.config``): the prefix and the field's name, in capitals."""
    if service != "worker":
        return {}
    module = importlib.import_module("jobs_worker.handlers.config")
    found = {}
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if issubclass(cls, HandlerConfig) and cls is not HandlerConfig:
            for name in cls.model_fields:
                variable = f"{cls.env_prefix()}{name}".upper()
                found[variable] = Variable(variable)
    return found


def service_variables(service: str) -> dict[str, Variable]:
    """Every variable a service reads: its settings classes', its handlers' own configuration
    (the worker's) and its code's own reads."""
    found: dict[str, Variable] = handler_config_variables(service)
    for cls in settings_classes(f"jobs_{service}.settings"):
        found |= settings_variables(cls)
    for path in sorted(service_source(service).rglob("*.py")):
        for name in environ_reads(path):
            found.setdefault(name, Variable(name))
    return found


def prefix_of(service: str) -> str:
    """The service's env prefix, as its settings classes declare it (``GATEWAY_``)."""
    prefixes = {
        str(cls.model_config.get("env_prefix", "")).upper()
        for cls in settings_classes(f"jobs_{service}.settings")
    }
    assert len(prefixes) == 1, f"{service}: settings classes with prefixes {prefixes}"
    return prefixes.pop()


def is_variable(name: str, variables: Mapping[str, Variable]) -> bool:
    """``name`` is one of ``variables``, or a nested key of a dict or model setting
    (``SCHEDULER_MAX_ATTEMPTS_BY_TYPE__EMAIL``)."""
    if name in variables:
        return True
    return any(
        v.nested_delimiter and name.startswith(v.name + v.nested_delimiter.upper())
        for v in variables.values()
    )
