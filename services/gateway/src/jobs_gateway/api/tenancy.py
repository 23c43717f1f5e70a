"""/api/organizations and /api/projects: organizations, their members and projects, served by
the gateway itself (it owns them: docs/tenancy.md)."""

from __future__ import annotations

import uuid
from datetime import datetime
from functools import partial
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Query, Request, Response, status
from pydantic import Field, field_validator

from jobs_common.api_models import CamelModel, Page
from jobs_common.errors import ErrorEnvelope
from jobs_common.tenancy import OrgRole
from jobs_gateway.adapters.project_jobs import ProjectJobs
from jobs_gateway.api.deps import LimitedIdentity, RequestId
from jobs_gateway.app.tenancy import Paging, Tenancy
from jobs_gateway.domain.tenancy import (
    NAME_MAX_LENGTH,
    SLUG_MAX_LENGTH,
    SLUG_PATTERN,
    Member,
    Membership,
    Project,
    slugify,
)
from jobs_gateway.domain.users import EMAIL_MAX_LENGTH

router = APIRouter(prefix="/api", tags=["organizations"])

MAX_PAGE_SIZE = 100
T = TypeVar("T")

Responses = dict[int | str, dict[str, Any]]
_404: Responses = {404: {"model": ErrorEnvelope, "description": "not found, or not yours to see"}}
_403: Responses = {403: {"model": ErrorEnvelope, "description": "your role may not do this"}}
_409: Responses = {409: {"model": ErrorEnvelope, "description": "conflicts with what exists"}}


async def _tenancy(request: Request) -> Tenancy:
    tenancy: Tenancy = request.app.state.tenancy
    return tenancy


TenancyDep = Annotated[Tenancy, Depends(_tenancy)]


class PageParams(CamelModel):
    page_number: int
    page_size: int

    @property
    def paging(self) -> Paging:
        return Paging(offset=(self.page_number - 1) * self.page_size, limit=self.page_size)


async def _page(
    page_number: Annotated[int, Query(alias="pageNumber", ge=1, le=10_000)] = 1,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=MAX_PAGE_SIZE)] = 25,
) -> PageParams:
    return PageParams(page_number=page_number, page_size=page_size)


PageDep = Annotated[PageParams, Depends(_page)]


Name = Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH)]
Slug = Annotated[str, Field(min_length=1, max_length=SLUG_MAX_LENGTH, pattern=SLUG_PATTERN)]


class _Named(CamelModel):
    @field_validator("name", check_fields=False)
    @classmethod
    def _trimmed(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value.strip() if value is not None else None


class OrganizationCreate(_Named):
    name: Name
    slug: Slug | None = Field(default=None, description="Unique; derived from the name if omitted.")


class OrganizationUpdate(_Named):
    name: Name | None = None
    slug: Slug | None = None


class OrganizationOut(CamelModel):
    id: uuid.UUID
    name: str
    slug: str
    personal: bool = Field(description="The personal organization a user got when registering.")
    created_at: datetime
    role: OrgRole | None = Field(
        description="Your role in it; null for a platform admin who is not a member."
    )

    @classmethod
    def of(cls, membership: Membership) -> OrganizationOut:
        o = membership.organization
        return cls(
            id=o.id,
            name=o.name,
            slug=o.slug,
            personal=o.personal,
            created_at=o.created_at,
            role=membership.role,
        )


class MemberCreate(CamelModel):
    email: str = Field(
        min_length=3, max_length=EMAIL_MAX_LENGTH, description="A registered user's."
    )
    role: OrgRole


class MemberUpdate(CamelModel):
    role: OrgRole


class MemberOut(CamelModel):
    user_id: uuid.UUID
    email: str
    role: OrgRole
    added_at: datetime

    @classmethod
    def of(cls, member: Member) -> MemberOut:
        return cls(
            user_id=member.user_id, email=member.email, role=member.role, added_at=member.added_at
        )


class ProjectCreate(_Named):
    org_id: uuid.UUID = Field(description="The organization that owns it.")
    name: Name
    slug: Slug | None = Field(
        default=None, description="Unique in the organization; derived from the name if omitted."
    )


class ProjectUpdate(_Named):
    name: Name | None = None
    slug: Slug | None = None


class ProjectOut(CamelModel):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    slug: str
    created_by: str
    created_at: datetime
    personal_default: bool = Field(
        description="The default project of a personal organization (cannot be deleted)."
    )

    @classmethod
    def of(cls, project: Project) -> ProjectOut:
        return cls(
            id=project.id,
            org_id=project.organization_id,
            name=project.name,
            slug=project.slug,
            created_by=project.created_by,
            created_at=project.created_at,
            personal_default=project.personal_default,
        )


# Organizations


@router.get("/organizations", summary="Your organizations (a platform admin: all)")
async def list_organizations(
    identity: LimitedIdentity, tenancy: TenancyDep, page: PageDep
) -> Page[OrganizationOut]:
    items, total = await tenancy.organizations(identity, page.paging)
    return Page[OrganizationOut].of([OrganizationOut.of(m) for m in items], total, page)


@router.post(
    "/organizations",
    status_code=status.HTTP_201_CREATED,
    summary="Create an organization (you become its owner)",
    responses=_409,
)
async def create_organization(
    body: OrganizationCreate, identity: LimitedIdentity, tenancy: TenancyDep
) -> OrganizationOut:
    membership = await tenancy.create_organization(
        identity, name=body.name, slug=body.slug or slugify(body.name)
    )
    return OrganizationOut.of(membership)


@router.get("/organizations/{org_id}", summary="One organization", responses=_404)
async def get_organization(
    org_id: uuid.UUID, identity: LimitedIdentity, tenancy: TenancyDep
) -> OrganizationOut:
    return OrganizationOut.of(await tenancy.organization(identity, org_id))


@router.patch(
    "/organizations/{org_id}",
    summary="Rename an organization or change its slug (owner)",
    responses={**_404, **_403, **_409},
)
async def update_organization(
    org_id: uuid.UUID, body: OrganizationUpdate, identity: LimitedIdentity, tenancy: TenancyDep
) -> OrganizationOut:
    membership = await tenancy.update_organization(identity, org_id, name=body.name, slug=body.slug)
    return OrganizationOut.of(membership)


# Members


@router.get("/organizations/{org_id}/members", summary="An organization's members", responses=_404)
async def list_members(
    org_id: uuid.UUID, identity: LimitedIdentity, tenancy: TenancyDep, page: PageDep
) -> Page[MemberOut]:
    items, total = await tenancy.members(identity, org_id, page.paging)
    return Page[MemberOut].of([MemberOut.of(m) for m in items], total, page)


@router.post(
    "/organizations/{org_id}/members",
    status_code=status.HTTP_201_CREATED,
    summary="Add a registered user to an organization with a role (owner)",
    responses={**_404, **_403, **_409},
)
async def add_member(
    org_id: uuid.UUID, body: MemberCreate, identity: LimitedIdentity, tenancy: TenancyDep
) -> MemberOut:
    member = await tenancy.add_member(identity, org_id, email=body.email, role=body.role)
    return MemberOut.of(member)


@router.patch(
    "/organizations/{org_id}/members/{user_id}",
    summary="Change a member's role (owner); an organization keeps an owner",
    responses={**_404, **_403, **_409},
)
async def change_member(
    org_id: uuid.UUID,
    user_id: uuid.UUID,
    body: MemberUpdate,
    identity: LimitedIdentity,
    tenancy: TenancyDep,
) -> MemberOut:
    member = await tenancy.change_member(identity, org_id, user_id, body.role)
    assert member is not None
    return MemberOut.of(member)


@router.delete(
    "/organizations/{org_id}/members/{user_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Remove a member (owner), or leave (yourself); an organization keeps an owner",
    responses={**_404, **_403, **_409},
)
async def remove_member(
    org_id: uuid.UUID, user_id: uuid.UUID, identity: LimitedIdentity, tenancy: TenancyDep
) -> Response:
    await tenancy.change_member(identity, org_id, user_id, None)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


# Projects


@router.get("/projects", summary="Projects you may see, of one organization or all", responses=_404)
async def list_projects(
    identity: LimitedIdentity,
    tenancy: TenancyDep,
    page: PageDep,
    org_id: Annotated[uuid.UUID | None, Query(alias="orgId")] = None,
) -> Page[ProjectOut]:
    items, total = await tenancy.projects(identity, org_id, page.paging)
    return Page[ProjectOut].of([ProjectOut.of(p) for p in items], total, page)


@router.post(
    "/projects",
    status_code=status.HTTP_201_CREATED,
    summary="Create a project in an organization (admin)",
    responses={**_404, **_403, **_409},
)
async def create_project(
    body: ProjectCreate, identity: LimitedIdentity, tenancy: TenancyDep
) -> ProjectOut:
    project = await tenancy.create_project(
        identity, body.org_id, name=body.name, slug=body.slug or slugify(body.name)
    )
    return ProjectOut.of(project)


@router.get("/projects/{project_id}", summary="One project", responses=_404)
async def get_project(
    project_id: uuid.UUID, identity: LimitedIdentity, tenancy: TenancyDep
) -> ProjectOut:
    return ProjectOut.of(await tenancy.project(identity, project_id))


@router.patch(
    "/projects/{project_id}",
    summary="Rename a project or change its slug (admin)",
    responses={**_404, **_403, **_409},
)
async def update_project(
    project_id: uuid.UUID, body: ProjectUpdate, identity: LimitedIdentity, tenancy: TenancyDep
) -> ProjectOut:
    project = await tenancy.update_project(identity, project_id, name=body.name, slug=body.slug)
    return ProjectOut.of(project)


@router.delete(
    "/projects/{project_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a project without unfinished jobs (admin); a personal default project stays",
    responses={
        **_404,
        **_403,
        **_409,
        503: {"model": ErrorEnvelope, "description": "unfinished jobs could not be counted"},
    },
)
async def delete_project(
    project_id: uuid.UUID,
    identity: LimitedIdentity,
    tenancy: TenancyDep,
    request: Request,
    request_id: RequestId,
) -> Response:
    jobs: ProjectJobs = request.app.state.project_jobs
    await tenancy.delete_project(
        identity, project_id, partial(jobs.unfinished, request_id=request_id)
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)
