"""The queue commands' shapes (docs/flow-control.md): what a PATCH changes (left out: kept;
null: cleared; a rate or a key: two columns each), what the schema refuses, and which
projects' queues a scope reaches."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from jobs_common.queue_commands import QueueCreate, QueuePatch, queue_projects
from jobs_common.tenancy import Scope, personal_project_id

pytestmark = pytest.mark.unit


def test_a_patch_changes_only_the_fields_it_names_and_null_clears() -> None:
    assert QueuePatch.model_validate({}).changes() == {}
    assert QueuePatch.model_validate({"maxConcurrency": None}).changes() == {
        "max_concurrency": None
    }
    assert QueuePatch.model_validate(
        {"rateLimit": {"limit": 600, "per": "minute"}, "concurrencyKey": None}
    ).changes() == {
        "rate_limit": 600,
        "rate_per_seconds": 60,
        "rate_tokens": None,
        "rate_refilled_at": None,
        "concurrency_key": None,
        "concurrency_key_limit": None,
    }
    assert QueuePatch.model_validate(
        {"concurrencyKey": {"field": "customerId", "limit": 2}, "defaultRetryPolicy": "gentle"}
    ).changes() == {
        "concurrency_key": "customerId",
        "concurrency_key_limit": 2,
        "default_retry_policy": "gentle",
    }


@pytest.mark.parametrize(
    "body",
    [
        {"name": "Emails"},
        {"name": "1st"},
        {"name": "e" * 64},
        {"name": "emails", "maxConcurrency": 0},
        {"name": "emails", "rateLimit": {"limit": 0, "per": "second"}},
        {"name": "emails", "rateLimit": {"limit": 5, "per": "hour"}},
        {"name": "emails", "rateLimit": {"limit": 5}},
        {"name": "emails", "concurrencyKey": {"field": "a.b", "limit": 1}},
        {"name": "emails", "concurrencyKey": {"field": "customerId", "limit": 0}},
        {"name": "emails", "defaultPriority": 0},
        {"name": "emails", "defaultTimeoutSeconds": 1701},
        {"name": "emails", "defaultRetryPolicy": "Gentle"},
        {"name": "emails", "other": True},
        {"name": "emails", "defaultTimeoutSeconds": True},
        {"name": "emails", "maxConcurrency": "3"},
        {"name": "emails", "maxConcurrency": 2.5},
        {"name": "emails", "rateLimit": {"limit": True, "per": "second"}},
        {"name": "emails", "paused": "yes"},
    ],
)
def test_the_schema_refuses_what_a_queue_cannot_hold(body: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        QueueCreate.model_validate(body)


def test_pause_is_not_a_patch() -> None:
    with pytest.raises(ValidationError, match="/pause and /resume"):
        QueuePatch.model_validate({"paused": True})


def test_a_scope_reaches_its_projects_queues_and_an_owner_its_personal_project_s() -> None:
    team = uuid.uuid4()
    assert queue_projects(Scope()) is None
    assert queue_projects(Scope(projects=frozenset({team}))) == {team}
    own = personal_project_id("ann@example.com")
    assert queue_projects(Scope(owner="ann@example.com")) == {own}
    assert queue_projects(Scope(owner="ann@example.com", projects=frozenset({team}))) == set()
