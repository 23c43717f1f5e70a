"""A handler's own configuration (``HandlerConfig``, ``@handler(config=...)``): read from the
environment by its prefix, handed to the handler as ``ctx.config``; the worker's settings are
not on the context, and a resource factory takes no arguments."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from jobs_sdk import HandlerConfig, HandlerDefinitionError, JobContext, handler, resource
from jobs_sdk.testing import run

pytestmark = pytest.mark.unit


class PartnerConfig(HandlerConfig, env_prefix="ACME_PARTNER_"):
    url: str = "https://partner.invalid"
    retries: int = 3
    token: SecretStr | None = None
    regions: list[str] = []


class Empty(BaseModel):
    pass


@handler("acme.partner_call", payload=Empty, config=PartnerConfig)
async def partner_call(ctx: JobContext, payload: Empty) -> dict[str, object]:
    config: PartnerConfig = ctx.config
    return {"url": config.url, "retries": config.retries, "settings": hasattr(ctx, "settings")}


def test_fields_read_their_prefixed_variables() -> None:
    config = PartnerConfig.from_env(
        {"ACME_PARTNER_RETRIES": "5", "ACME_PARTNER_TOKEN": "t", "ACME_PARTNER_REGIONS": '["eu"]'}
    )
    assert (config.retries, config.regions, config.url) == (5, ["eu"], "https://partner.invalid")
    assert config.token is not None and config.token.get_secret_value() == "t"
    assert "t'" not in repr(config)  # a secret stays hidden in logs


def test_a_malformed_value_is_refused() -> None:
    with pytest.raises(ValidationError, match="retries"):
        PartnerConfig.from_env({"ACME_PARTNER_RETRIES": "many"})


def test_the_handler_reads_its_config_never_the_workers_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACME_PARTNER_URL", "https://partner.example")
    outcome = run(partner_call, {})
    assert outcome.result == {"url": "https://partner.example", "retries": 3, "settings": False}
    given = run(partner_call, {}, config=PartnerConfig(retries=9))
    assert given.result is not None and given.result["retries"] == 9


def test_config_must_be_a_handler_config() -> None:
    with pytest.raises(HandlerDefinitionError, match="config= is a HandlerConfig class"):
        handler("acme.bad", payload=Empty, config=Empty)  # type: ignore[arg-type]


def test_a_resource_factory_takes_no_arguments() -> None:
    async def needs_settings(settings: object) -> AsyncIterator[object]:
        yield settings

    with pytest.raises(HandlerDefinitionError, match="takes no arguments"):
        resource("acme.http")(needs_settings)  # type: ignore[arg-type]
