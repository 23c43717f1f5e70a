"""Settings: env prefix, prefetch per ready queue; no handler configuration among them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from jobs_common.topology import READY_HIGH, READY_LOW, READY_MEDIUM
from jobs_worker.settings import Settings

pytestmark = pytest.mark.unit


def test_defaults_and_prefetch() -> None:
    settings = Settings()
    assert settings.port == 9100
    assert [settings.prefetch_for(q) for q in (READY_HIGH, READY_MEDIUM, READY_LOW)] == [20, 10, 5]
    assert settings.drain_timeout == 30


def test_env_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_PREFETCH_LOW", "2")
    settings = Settings()
    assert settings.prefetch_for(READY_LOW) == 2


def test_the_worker_holds_no_handler_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """SMTP credentials and the job store's URL are the built-in handlers' own configuration
    (jobs_worker.handlers.config), never the worker's settings a handler could be handed."""
    monkeypatch.setenv("WORKER_SMTP_PASSWORD", "s3cret")
    monkeypatch.setenv("WORKER_DATABASE_URL", "postgresql+asyncpg://u:pw@db/jobs")
    dumped = Settings().model_dump_json()
    assert "s3cret" not in dumped and "pw@db" not in dumped
    assert not {"smtp_password", "database_url", "artifacts_dir"} & set(Settings.model_fields)


def test_hand_backs_are_bounded_by_default() -> None:
    policy = Settings().ack_policy
    assert (policy.max_requeues, policy.pause, policy.max_pause) == (20, 1.0, 30.0)


def test_hand_back_bound_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKER_MAX_REQUEUES", "4")
    monkeypatch.setenv("WORKER_REQUEUE_PAUSE", "0.5")
    monkeypatch.setenv("WORKER_REQUEUE_PAUSE_MAX", "8")
    monkeypatch.setenv("WORKER_REQUEUE_COUNTS_CAPACITY", "100")
    settings = Settings()
    policy = settings.ack_policy
    assert (policy.max_requeues, policy.pause, policy.max_pause) == (4, 0.5, 8.0)
    assert settings.requeue_counts_capacity == 100


def test_a_negative_hand_back_bound_is_refused() -> None:
    with pytest.raises(ValidationError):
        Settings(max_requeues=-1)
