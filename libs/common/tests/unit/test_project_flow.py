"""A project's weight (docs/flow-control.md, "Project weights"): what a change's schema
refuses, the view of a project never given one, and which projects' weights a scope reaches."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from jobs_common.project_flow import (
    PROJECT_FLOW_PATH,
    ProjectFlowChange,
    ProjectFlowView,
    project_flow_path,
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
    ],
)
def test_the_schema_refuses_what_a_weight_cannot_be(body: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ProjectFlowChange.model_validate(body)


def test_a_project_never_given_a_weight_weighs_1_set_by_nobody() -> None:
    project = uuid.uuid4()
    assert ProjectFlowView.unset(project).model_dump(mode="json", by_alias=True) == {
        "projectId": str(project),
        "weight": 1,
        "updatedBy": None,
        "updatedAt": None,
    }


def test_the_internal_path_names_the_project() -> None:
    project = uuid.uuid4()
    assert PROJECT_FLOW_PATH == "/internal/v1/projects/{projectId}/flow"
    assert project_flow_path(project) == f"/internal/v1/projects/{project}/flow"


def test_a_scope_reaches_its_projects_weights_and_an_owner_its_personal_project_s() -> None:
    team, other = uuid.uuid4(), uuid.uuid4()
    own = personal_project_id("ann@example.com")
    assert reaches(Scope(), team)
    assert reaches(Scope(projects=frozenset({team})), team)
    assert not reaches(Scope(projects=frozenset({team})), other)
    assert not reaches(Scope(projects=frozenset()), team)
    assert reaches(Scope(owner="ann@example.com"), own)
    assert not reaches(Scope(owner="ann@example.com"), team)
