"""Settings bases: each service subclasses with its own env prefix (GATEWAY_, SCHEDULER_...).

Outside development a service refuses to start with a secret that is missing, empty, shorter
than :data:`MIN_SECRET_BYTES` or one of the development secrets published in this repository;
every refusal names the environment variable to set (:func:`settings_from_environment`)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Self, TypeVar

import orjson
from pydantic import (
    AfterValidator,
    AmqpDsn,
    AnyHttpUrl,
    BeforeValidator,
    Field,
    MongoDsn,
    PostgresDsn,
    ValidationError,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEV_SECRET = "dev-only-secret-change-me-0123456789abcdef"
DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789abcdef"
# Secrets anyone can read in this repository (the defaults, which .env.example repeats).
KNOWN_DEV_SECRETS = frozenset({DEV_SECRET, DEV_JWT_SECRET})
MIN_SECRET_BYTES = 32


class Environment(StrEnum):
    DEVELOPMENT = "development"
    TEST = "test"
    PRODUCTION = "production"


def _dsn(kind: Any) -> AfterValidator:
    """Check a URL against pydantic's DSN type ``kind`` (scheme, host, port) and keep the text
    as given, so drivers receive exactly what the operator wrote."""

    def check(value: str) -> str:
        kind(value)
        return value

    return AfterValidator(check)


PostgresUrl = Annotated[str, _dsn(PostgresDsn)]
AmqpUrl = Annotated[str, _dsn(AmqpDsn)]
MongoUrl = Annotated[str, _dsn(MongoDsn)]
HttpBaseUrl = Annotated[str, _dsn(AnyHttpUrl)]


def list_entries(value: Any) -> Any:
    """A list setting from the environment: ``"a, b"`` or a JSON array (``'["a", "b"]'``),
    entries stripped, empty ones dropped. Use with ``NoDecode`` (see :data:`EntryList`)."""
    if isinstance(value, str):
        text = value.strip()
        value = orjson.loads(text) if text.startswith("[") else text.split(",")
    if isinstance(value, list | tuple):
        return [str(item).strip() for item in value if str(item).strip()]
    return value


def _networks(entries: list[str]) -> list[str]:
    """Each entry as its network (``10.1.2.3/8`` -> ``10.0.0.0/8``): what uvicorn's strict
    parsing accepts, so no entry is silently ignored there."""
    networks = []
    for entry in entries:
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f"{entry!r} is neither an IP address nor a network") from None
        networks.append(
            str(network.network_address) if network.num_addresses == 1 else str(network)
        )
    return networks


EntryList = Annotated[list[str], NoDecode, BeforeValidator(list_entries)]
NetworkList = Annotated[
    list[str], NoDecode, BeforeValidator(list_entries), AfterValidator(_networks)
]
"""IP addresses and networks (``10.0.0.0/8``), comma-separated or a JSON array."""
HttpBaseUrlList = Annotated[
    list[HttpBaseUrl], NoDecode, BeforeValidator(list_entries), Field(min_length=1)
]
"""Base URLs of the replicas of one service, comma-separated or a JSON array."""
OptionalHttpBaseUrlList = Annotated[list[HttpBaseUrl], NoDecode, BeforeValidator(list_entries)]
"""As :data:`HttpBaseUrlList`, where none (empty) turns a feature off."""


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", env_nested_delimiter="__")

    environment: Environment = Environment.DEVELOPMENT
    log_level: str = "INFO"
    log_json: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65_535)
    # Liveness (jobs_common.liveness): how often the service's own parts are checked, and how
    # long one may fail without a break before the process exits to be restarted.
    liveness_interval_seconds: float = Field(default=5.0, gt=0)
    liveness_give_up_seconds: float = Field(default=60.0, gt=0)

    @property
    def is_development(self) -> bool:
        return self.environment is Environment.DEVELOPMENT


def env_name(settings: BaseSettings, field: str) -> str:
    """The environment variable that sets ``field`` (``GATEWAY_JWT_SECRET``)."""
    return f"{settings.model_config.get('env_prefix', '')}{field}".upper()


# Environment variables cannot hold a NUL byte, so this default means "not set".
UNSET_SECRET = "\0unset"


def resolve_secret(settings: BaseSettings, field: str, value: str, *, development: str) -> str:
    """``value``, or ``development`` when unset in development. Outside development a missing,
    empty, short or published secret is refused, naming its variable."""
    name = env_name(settings, field)
    environment = getattr(settings, "environment", Environment.DEVELOPMENT)
    in_development = environment is Environment.DEVELOPMENT
    if value == UNSET_SECRET:
        if in_development:
            return development
        raise ValueError(
            f"{name} must be set when {env_name(settings, 'environment')}={environment}"
        )
    if not value:
        raise ValueError(f"{name} must not be empty")
    if in_development:
        return value
    if value in KNOWN_DEV_SECRETS:
        raise ValueError(
            f"{name} is a development secret published in the repository: set one of your own"
        )
    if len(value.encode()) < MIN_SECRET_BYTES:
        raise ValueError(f"{name} must be at least {MIN_SECRET_BYTES} bytes outside development")
    return value


class AmqpSettingsMixin(BaseSettings):
    # repr=False: a URL may carry a password, and a settings object may be logged.
    amqp_url: AmqpUrl = Field(default="amqp://guest:guest@127.0.0.1:5672/", repr=False)


class PostgresSettingsMixin(BaseSettings):
    database_url: PostgresUrl = Field(
        default="postgresql+asyncpg://postgres@127.0.0.1:5432/jobs", repr=False
    )
    db_pool_size: int = Field(default=10, ge=1)


class InternalAuthMixin(BaseSettings):
    """Shared secret the gateway puts on every proxied call; backends refuse calls without it.
    Unset in development, it is :data:`DEV_SECRET`."""

    internal_token: str = Field(default=UNSET_SECRET, repr=False)
    # While the token is rotated: the one being replaced, still accepted by backends.
    internal_token_previous: str | None = Field(default=None, repr=False)

    @model_validator(mode="after")
    def _internal_token_is_a_secret(self) -> Self:
        self.internal_token = resolve_secret(
            self, "internal_token", self.internal_token, development=DEV_SECRET
        )
        if self.internal_token_previous is not None:
            self.internal_token_previous = resolve_secret(
                self, "internal_token_previous", self.internal_token_previous, development=""
            )
        return self

    @property
    def previous_internal_tokens(self) -> tuple[str, ...]:
        return (self.internal_token_previous,) if self.internal_token_previous else ()


SettingsT = TypeVar("SettingsT", bound=ServiceSettings)


class SettingsError(SystemExit):
    """Settings the environment gives cannot start the service; the message lists each
    variable to fix."""


def describe_errors(errors: Iterable[Any], env_prefix: str) -> list[str]:
    """One line per pydantic error, naming the environment variable where it is known."""
    lines = []
    for error in errors:
        location = [str(part) for part in error.get("loc", ()) if part != "__root__"]
        message = str(error.get("msg", "invalid"))
        message = message.removeprefix("Value error, ")
        if location:
            lines.append(f"{(env_prefix + location[0]).upper()}: {message}")
        else:
            lines.append(message)
    return lines


def settings_from_environment(settings_type: type[SettingsT]) -> SettingsT:
    """Build ``settings_type`` from the environment, or exit with one line per variable."""
    try:
        return settings_type()
    except ValidationError as exc:
        prefix = str(settings_type.model_config.get("env_prefix", ""))
        lines = describe_errors(exc.errors(), prefix)
        raise SettingsError(
            f"{settings_type.__module__}: invalid settings\n  " + "\n  ".join(lines)
        ) from None
