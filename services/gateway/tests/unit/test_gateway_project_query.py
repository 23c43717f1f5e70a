"""The ``projectId`` a client names (an id, a slug, ``org/slug``) reaches a backend as the id
the gateway resolved; the rest of the query is kept."""

from __future__ import annotations

import pytest

from jobs_gateway.domain.project_scope import with_project_id

pytestmark = pytest.mark.unit

ID = "0b6a3f9e-8d0c-4f55-9a3e-2f7d9c1b4e21"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("projectId=acme%2Fweb&status=dead", f"projectId={ID}&status=dead"),
        ("status=dead&projectId=web", f"status=dead&projectId={ID}"),
        (f"projectId={ID}", f"projectId={ID}"),
        ("status=dead&pageSize=5", "status=dead&pageSize=5"),  # none named: kept as sent
        ("xprojectId=1", "xprojectId=1"),
        ("", ""),
    ],
)
def test_the_named_project_becomes_its_id(query: str, expected: str) -> None:
    assert with_project_id(query, ID) == expected


def test_without_a_resolved_project_the_query_is_kept() -> None:
    assert with_project_id("projectId=web", None) == "projectId=web"
