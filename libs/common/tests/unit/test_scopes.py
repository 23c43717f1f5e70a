"""What a caller may read or change, by role (docs/tenancy.md, "Who sees what"):
``Identity.scope``, ``Identity.require`` and ``Scope.narrowed_to``."""

from __future__ import annotations

import uuid

import pytest

from jobs_common.auth import Identity
from jobs_common.errors import Forbidden, NotFound
from jobs_common.tenancy import OrgRole, Scope, personal_project_id

pytestmark = pytest.mark.unit

WEB, OPS, ELSEWHERE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()


def scoped(
    *grants: tuple[uuid.UUID, OrgRole], role: str = "user", key: str | None = None
) -> Identity:
    return Identity(
        user_id="u",
        email="ann@example.com",
        role=role,  # type: ignore[arg-type]
        grants=tuple((str(project), granted) for project, granted in grants),
        api_key=key,
    )


def test_a_scope_holds_the_projects_where_the_role_is_enough() -> None:
    ann = scoped((WEB, OrgRole.MEMBER), (OPS, OrgRole.VIEWER))
    assert ann.scope(OrgRole.VIEWER) == Scope(projects=frozenset({WEB, OPS}))
    assert ann.scope(OrgRole.MEMBER) == Scope(projects=frozenset({WEB}))
    assert ann.scope(OrgRole.ADMIN) == Scope(projects=frozenset())


def test_the_platform_admin_is_limited_by_nothing_unless_it_named_a_project() -> None:
    admin = Identity(user_id="a", email="admin@example.com", role="admin")
    assert admin.scope(OrgRole.OWNER) == Scope()
    named = scoped((WEB, OrgRole.OWNER), role="admin")
    assert named.scope(OrgRole.VIEWER) == Scope(projects=frozenset({WEB}))


def test_a_caller_nobody_scoped_reads_its_own_rows() -> None:
    backend = Identity(user_id="u", email="ann@example.com", role="user")
    assert backend.scope() == Scope(owner="ann@example.com")
    assert backend.role_in(str(personal_project_id("ann@example.com"))) is OrgRole.OWNER


def test_require_answers_404_outside_and_403_below_the_role() -> None:
    ann = scoped((WEB, OrgRole.VIEWER))
    with pytest.raises(NotFound, match="job x not found"):
        ann.require(str(ELSEWHERE), OrgRole.MEMBER, to="retry jobs", missing="job x not found")
    with pytest.raises(Forbidden, match="a viewer may not retry jobs in this project"):
        ann.require(str(WEB), OrgRole.MEMBER, to="retry jobs", missing="job x not found")
    assert (
        scoped((WEB, OrgRole.ADMIN)).require(str(WEB), OrgRole.MEMBER, to="retry jobs", missing="-")
        is OrgRole.ADMIN
    )


def test_narrowing_to_a_project_never_widens_a_scope() -> None:
    assert Scope().narrowed_to(WEB) == Scope(projects=frozenset({WEB}))
    assert Scope(projects=frozenset({WEB, OPS})).narrowed_to(OPS).projects == {OPS}
    assert Scope(projects=frozenset({WEB})).narrowed_to(ELSEWHERE).projects == frozenset()
    assert Scope(owner="ann@example.com").narrowed_to(WEB).owner == "ann@example.com"
