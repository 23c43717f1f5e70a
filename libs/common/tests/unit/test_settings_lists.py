"""List settings from the environment: comma-separated or JSON, and IP networks normalised so
uvicorn's strict parsing (trusted proxies) accepts every entry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from jobs_common.settings import EntryList, HttpBaseUrlList, NetworkList

pytestmark = pytest.mark.unit


class Lists(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LISTS_")

    names: EntryList = []
    networks: NetworkList = []
    urls: HttpBaseUrlList = ["http://127.0.0.1:8080"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("a, b ,,c", ["a", "b", "c"]), ('["a", " b "]', ["a", "b"]), ("", []), (" ", [])],
)
def test_entries_are_comma_separated_or_json(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: list[str]
) -> None:
    monkeypatch.setenv("LISTS_NAMES", raw)
    assert Lists().names == expected


def test_networks_are_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LISTS_NETWORKS", "10.1.2.3/8, 127.0.0.1, ::1, 192.168.0.0/16")
    assert Lists().networks == ["10.0.0.0/8", "127.0.0.1", "::1", "192.168.0.0/16"]


@pytest.mark.parametrize("bad", ["proxy.internal", "*", "10.0.0.0/33"])
def test_a_bad_network_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("LISTS_NETWORKS", f"127.0.0.1,{bad}")
    with pytest.raises(ValidationError, match="neither an IP address nor a network"):
        Lists()


def test_replica_urls_are_a_list_of_http_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LISTS_URLS", "http://s1:8080, http://s2:8080")
    assert Lists().urls == ["http://s1:8080", "http://s2:8080"]
    for bad in ("", "s1:8080", "http://s1:8080,ftp://s2"):
        monkeypatch.setenv("LISTS_URLS", bad)
        with pytest.raises(ValidationError):
            Lists()
