"""Safe defaults: which secrets each environment accepts, DSNs checked, errors naming the
variable. The expected outcomes are written out here, not derived from the code."""

from __future__ import annotations

import pytest
from pydantic_settings import SettingsConfigDict

from jobs_common.settings import (
    DEV_JWT_SECRET,
    DEV_SECRET,
    InternalAuthMixin,
    MongoUrl,
    PostgresSettingsMixin,
    ServiceSettings,
    SettingsError,
    settings_from_environment,
)

pytestmark = pytest.mark.unit

REAL = "a-secret-of-our-own-with-more-than-32-bytes"


class Backend(ServiceSettings, PostgresSettingsMixin, InternalAuthMixin):
    model_config = SettingsConfigDict(env_prefix="DEMO_", extra="ignore")
    mongo_url: MongoUrl = "mongodb://127.0.0.1:27017"


UNSET = object()
ACCEPT = "accept"

# (environment, internal token as set, expected token or the refusal's text)
CASES = [
    ("development", UNSET, DEV_SECRET),
    ("development", DEV_SECRET, DEV_SECRET),
    ("development", "short", "short"),
    ("development", "", "DEMO_INTERNAL_TOKEN must not be empty"),
    ("development", REAL, REAL),
    ("test", UNSET, "DEMO_INTERNAL_TOKEN must be set when DEMO_ENVIRONMENT=test"),
    ("test", "", "DEMO_INTERNAL_TOKEN must not be empty"),
    ("test", DEV_SECRET, "DEMO_INTERNAL_TOKEN is a development secret"),
    ("test", DEV_JWT_SECRET, "DEMO_INTERNAL_TOKEN is a development secret"),
    ("test", "x" * 31, "DEMO_INTERNAL_TOKEN must be at least 32 bytes"),
    ("test", "x" * 32, "x" * 32),
    ("production", UNSET, "DEMO_INTERNAL_TOKEN must be set when DEMO_ENVIRONMENT=production"),
    ("production", DEV_SECRET, "DEMO_INTERNAL_TOKEN is a development secret"),
    ("production", "short", "DEMO_INTERNAL_TOKEN must be at least 32 bytes"),
    ("production", REAL, REAL),
]


@pytest.mark.parametrize(("environment", "given", "expected"), CASES)
def test_internal_token_by_environment(
    monkeypatch: pytest.MonkeyPatch, environment: str, given: object, expected: str
) -> None:
    monkeypatch.setenv("DEMO_ENVIRONMENT", environment)
    if given is not UNSET:
        monkeypatch.setenv("DEMO_INTERNAL_TOKEN", str(given))
    if expected.startswith("DEMO_"):
        with pytest.raises(SettingsError) as refused:
            settings_from_environment(Backend)
        assert expected in str(refused.value)
    else:
        assert settings_from_environment(Backend).internal_token == expected


def test_a_secret_stays_out_of_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_INTERNAL_TOKEN", REAL)
    assert REAL not in repr(settings_from_environment(Backend))


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEMO_DATABASE_URL", "mysql://root@127.0.0.1/jobs"),
        ("DEMO_DATABASE_URL", "not a url"),
        ("DEMO_MONGO_URL", "http://127.0.0.1:27017"),
        ("DEMO_ENVIRONMENT", "staging"),
        ("DEMO_PORT", "70000"),
    ],
)
def test_a_wrong_value_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as refused:
        settings_from_environment(Backend)
    lines = str(refused.value).splitlines()
    assert lines[1].strip().startswith(f"{variable}: ")
    assert value not in str(refused.value) or variable == "DEMO_ENVIRONMENT"


def test_urls_are_kept_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "postgresql+asyncpg://jobs:p%40ss@db.internal:6432/jobs"
    monkeypatch.setenv("DEMO_DATABASE_URL", url)
    monkeypatch.setenv("DEMO_MONGO_URL", "mongodb://a:27017,b:27017/?replicaSet=rs0")
    settings = settings_from_environment(Backend)
    assert settings.database_url == url
    assert settings.mongo_url == "mongodb://a:27017,b:27017/?replicaSet=rs0"


def test_the_token_being_rotated_out_is_held_to_the_same_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEMO_ENVIRONMENT", "production")
    monkeypatch.setenv("DEMO_INTERNAL_TOKEN", REAL)
    assert settings_from_environment(Backend).previous_internal_tokens == ()
    monkeypatch.setenv("DEMO_INTERNAL_TOKEN_PREVIOUS", DEV_SECRET)
    with pytest.raises(SettingsError, match="DEMO_INTERNAL_TOKEN_PREVIOUS is a development"):
        settings_from_environment(Backend)
    monkeypatch.setenv("DEMO_INTERNAL_TOKEN_PREVIOUS", REAL + "-old")
    assert settings_from_environment(Backend).previous_internal_tokens == (REAL + "-old",)


def test_connection_urls_stay_out_of_a_settings_repr() -> None:
    """A URL may carry a password; a settings object may end up in a log line."""
    from jobs_common.settings import AmqpSettingsMixin
    from jobs_submission.settings import Settings as SubmissionSettings

    class Service(ServiceSettings, PostgresSettingsMixin, AmqpSettingsMixin):
        model_config = SettingsConfigDict(env_prefix="DEMO_", extra="ignore")

    service = Service(
        database_url="postgresql://jobs:pg-password@db:5432/jobs",
        amqp_url="amqp://jobs:mq-password@mq:5672/",
    )
    submission = SubmissionSettings(mongo_url="mongodb://jobs:mongo-password@mongo:27017")
    for shown in (repr(service), str(service), repr(submission)):
        assert "password" not in shown, shown
    assert service.database_url.endswith("@db:5432/jobs")  # still there to use
