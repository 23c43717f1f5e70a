"""A handler's own configuration, read from the environment: the settings it declares, never
the worker's (whose database URL and SMTP password a team's code has no business reading).

    class SmtpConfig(HandlerConfig, env_prefix="ACME_SMTP_"):
        host: str = "127.0.0.1"
        port: int = 25
        password: SecretStr | None = None

    @handler("acme.notify", payload=Notify, config=SmtpConfig)
    async def notify(ctx: JobContext, payload: Notify) -> None:
        config: SmtpConfig = ctx.config

A field reads ``<env_prefix><FIELD NAME IN CAPITALS>`` (``ACME_SMTP_PORT``); pydantic turns
the text into the field's type, and a list or mapping field takes JSON (``'["a","b"]'``). The
worker reads each handler's configuration once, when it loads the handler, so a missing or
malformed value stops the worker at start, not a job at run time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict


class HandlerConfig(BaseModel):
    """Base of a handler's settings model (see the module's docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    _env_prefix: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # pydantic keeps a class keyword it knows as configuration (``env_prefix`` is one
        # once pydantic-settings is imported) and hands the others here.
        prefix = kwargs.pop("env_prefix", None)
        super().__init_subclass__(**kwargs)
        if prefix is not None:
            cls._env_prefix = str(prefix)

    @classmethod
    def env_prefix(cls) -> str:
        """What the class's ``env_prefix=`` keyword set; "" by default."""
        if cls._env_prefix is not None:
            return cls._env_prefix
        return str(dict(cls.model_config).get("env_prefix", ""))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The configuration as ``environ`` (default: the process's) sets it; fields it does
        not set keep their defaults."""
        source = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, field in cls.model_fields.items():
            raw = source.get(f"{cls.env_prefix()}{name}".upper())
            if raw is None:
                continue
            values[name] = _decoded(raw) if _structured(field.annotation) else raw
        return cls.model_validate(values)


def _structured(annotation: object) -> bool:
    """Whether a field takes a list, set, tuple or mapping (given as JSON in the variable)."""
    text = repr(annotation)
    return any(kind in text for kind in ("list", "set", "tuple", "dict", "Mapping", "Sequence"))


def _decoded(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw  # a validator of the field's own may parse its text (a comma list...)
