"""The session file is private from its first byte: 0600 in a 0700 directory, whatever the
umask, written whole or not at all, under XDG_CONFIG_HOME (or ~/.config)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs_client import SessionFile, Tokens
from jobs_client.session import Session, config_dir

pytestmark = pytest.mark.unit

TOKENS = Tokens(
    access_token="a1", refresh_token="r1", expires_at=1234.5, email="u@x.io", role="user"
)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: the file must still come out 0600."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_config_dir_follows_xdg_and_ignores_a_relative_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_dir() == tmp_path / "jobs"
    assert SessionFile().path == tmp_path / "jobs" / "session.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "home" / ".config" / "jobs"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert config_dir() == tmp_path / "home" / ".config" / "jobs"


@pytest.mark.usefixtures("open_umask")
def test_the_file_is_0600_in_a_0700_directory_from_its_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionFile(tmp_path / "cfg" / "jobs" / "session.json")
    opened: list[tuple[int, int]] = []
    modes_before_rename: list[int] = []
    real_open, real_replace = os.open, os.replace

    def spy_open(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        opened.append((flags, mode))
        return real_open(path, flags, mode, **kwargs)

    def spy_replace(source: Any, target: Any) -> None:
        modes_before_rename.append(stat.S_IMODE(os.stat(source).st_mode))
        real_replace(source, target)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "replace", spy_replace)
    store.write(Session(url="http://h:3000", tokens=TOKENS))

    flags, created_mode = opened[0]
    assert created_mode == 0o600
    assert flags & os.O_CREAT and flags & os.O_EXCL  # a new file: never an old, wider one
    assert modes_before_rename == [0o600]  # private before it holds the tokens under its name
    assert mode(store.path) == 0o600
    assert mode(store.path.parent) == 0o700
    assert [p.name for p in store.path.parent.iterdir()] == ["session.json"]


def test_a_rewrite_replaces_a_file_someone_widened(tmp_path: Path) -> None:
    store = SessionFile(tmp_path / "session.json")
    store.write(Session(url="http://h", tokens=TOKENS))
    store.path.chmod(0o644)
    store.write(Session(url="http://h", tokens=TOKENS))
    assert mode(store.path) == 0o600


def test_it_round_trips_and_stores_refreshed_tokens_under_its_url(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    SessionFile(path).write(Session(url="http://h:3000", tokens=TOKENS))
    assert SessionFile(path).read() == Session(url="http://h:3000", tokens=TOKENS)

    renewed = Tokens(access_token="a2", refresh_token="r2", expires_at=99.0, email="u@x.io")
    SessionFile(path).save(renewed)  # keeps the URL already stored
    assert SessionFile(path).read() == Session(url="http://h:3000", tokens=renewed)
    SessionFile(path, url="http://other").save(TOKENS)
    assert SessionFile(path).read() == Session(url="http://other", tokens=TOKENS)
    assert "password" not in path.read_text()


def test_a_missing_or_damaged_file_is_no_session(tmp_path: Path) -> None:
    store = SessionFile(tmp_path / "session.json")
    assert store.read() is None and store.load() is None
    with pytest.raises(RuntimeError):
        store.save(TOKENS)  # no URL to store it under
    store.path.write_text("{not json")
    assert store.read() is None
    assert store.delete() is True and store.delete() is False
