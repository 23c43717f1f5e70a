"""A project's weight and quotas (docs/flow-control.md, "Project weights" and "Quotas"):
what a change's schema refuses and which fields it changes, the view of a project never given
a setting, and which projects' settings a scope reaches."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from jobs_common.project_flow import (
    PROJECT_FLOW_PATH,
    PROJECT_QUOTA_PATH,
    ProjectFlowChange,
    ProjectFlowView,
    project_flow_path,
    project_quota_path,
    reaches,
)
from jobs_common.tenancy import Scope, personal_project_id

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("weight", [1, 5, 100])
def test_a_weight_from_1_to_100_is_a_change(weight: int) -> None:
    assert ProjectFlowChange.model_validate({"weight": weight}).weight == weight
    assert ProjectFlowChange.model_validate_json(f'{{"weight": {weight}}}').weight == weight


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"weight": 0},
        {"weight": 101},
        {"weight": -1},
        {"weight": "3"},
        {"weight": 2.0},
        {"weight": 2.5},
        {"weight": True},
        {"weight": None},
        {"weight": 3, "projectId": str(uuid.uuid4())},
        {"weight": 3, "surprise": 1},
        {"maxWaiting": 0},
        {"maxWaiting": -1},
        {"maxWaiting": "5"},
        {"maxWaiting": 5.0},
        {"maxWaiting": True},
        {"maxWaiting": 2**31},
        {"maxSubmittedPerDay": 0},
        {"maxSubmittedPerDay": "10"},
        {"maxSubmittedPerDay": False},
        {"maxRunning": 0},
        {"maxRunning": 2.5},
        {"weight": None, "maxWaiting": 5},
    ],
)
def test_the_schema_refuses_what_a_weight_or_a_quota_cannot_be(body: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ProjectFlowChange.model_validate(body)


@pytest.mark.parametrize(
    ("body", "changes"),
    [
        ({"weight": 5}, {"weight": 5}),
        ({"maxWaiting": 10}, {"max_waiting": 10}),
        ({"maxWaiting": None}, {"max_waiting": None}),
        (
            {"maxSubmittedPerDay": 1000, "maxWaiting": 1, "weight": 2},
            {"max_submitted_per_day": 1000, "max_waiting": 1, "weight": 2},
        ),
        ({"maxSubmittedPerDay": None}, {"max_submitted_per_day": None}),
        ({"maxRunning": 3}, {"max_running": 3}),
        ({"maxRunning": None}, {"max_running": None}),
    ],
)
def test_a_change_sets_the_fields_given_and_no_other(
    body: dict[str, object], changes: dict[str, object]
) -> None:
    change = ProjectFlowChange.model_validate(body)
    assert change.changes() == changes
    assert change.model_dump(mode="json", by_alias=True, exclude_unset=True) == body


def test_the_public_schema_has_a_weight_never_null_and_quotas_that_may_be() -> None:
    properties = ProjectFlowChange.model_json_schema(by_alias=True)["properties"]
    assert properties["weight"]["type"] == "integer"
    assert {"type": "null"} in properties["maxWaiting"]["anyOf"]
    assert {"type": "null"} in properties["maxSubmittedPerDay"]["anyOf"]
    assert {"type": "null"} in properties["maxRunning"]["anyOf"]


def test_a_project_never_given_a_weight_weighs_1_with_no_quota_set_by_nobody() -> None:
    project = uuid.uuid4()
    assert ProjectFlowView.unset(project).model_dump(mode="json", by_alias=True) == {
        "projectId": str(project),
        "weight": 1,
        "maxWaiting": None,
        "maxSubmittedPerDay": None,
        "maxRunning": None,
        "updatedBy": None,
        "updatedAt": None,
    }


def test_the_internal_paths_name_the_project() -> None:
    project = uuid.uuid4()
    assert PROJECT_FLOW_PATH == "/internal/v1/projects/{projectId}/flow"
    assert project_flow_path(project) == f"/internal/v1/projects/{project}/flow"
    assert PROJECT_QUOTA_PATH == "/internal/v1/projects/{projectId}/quota"
    assert project_quota_path(project) == f"/internal/v1/projects/{project}/quota"


def test_a_scope_reaches_its_projects_weights_and_an_owner_its_personal_project_s() -> None:
    team, other = uuid.uuid4(), uuid.uuid4()
    own = personal_project_id("ann@example.com")
    assert reaches(Scope(), team)
    assert reaches(Scope(projects=frozenset({team})), team)
    assert not reaches(Scope(projects=frozenset({team})), other)
    assert not reaches(Scope(projects=frozenset()), team)
    assert reaches(Scope(owner="ann@example.com"), own)
    assert not reaches(Scope(owner="ann@example.com"), team)
