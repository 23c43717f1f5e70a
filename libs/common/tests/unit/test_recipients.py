"""The recipient allow-list setting: parsed from the environment's text, checked."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from jobs_common.recipients import RecipientList

pytestmark = pytest.mark.unit


class Example(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EXAMPLE_")

    allowed: RecipientList = []


def test_comma_separated_or_json_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXAMPLE_ALLOWED", " Ops@Example.com , example.org,,")
    assert Example().allowed == ["ops@example.com", "example.org"]
    monkeypatch.setenv("EXAMPLE_ALLOWED", '["a@b.org", "@c.net"]')
    assert Example().allowed == ["a@b.org", "@c.net"]
    monkeypatch.setenv("EXAMPLE_ALLOWED", "")
    assert Example().allowed == []


@pytest.mark.parametrize("entry", ["a@", "a@b@c.org", "two words.org"])
def test_malformed_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValidationError):
        Example(allowed=entry)
