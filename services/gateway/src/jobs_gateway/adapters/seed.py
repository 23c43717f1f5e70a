"""Idempotent demo data of development: the demo users (admin@test.com / admin123,
user@test.com / user123) and the demo team (domain/demo.py: Acme Corp and Startup Inc, their
members and projects)."""

from __future__ import annotations

import logging

from jobs_common.db import create_engine
from jobs_common.errors import Conflict
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.tenancy import TenancyStore
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.audit import AuditAction, AuditEntry
from jobs_gateway.domain.demo import DEMO_ORGANIZATIONS, DEMO_TEAM
from jobs_gateway.domain.users import DEMO_USERS

log = logging.getLogger(__name__)

SEEDER = "demo seed"  # the actor of the demo team's audit rows


async def seed_demo_users(repository: UserRepository, passwords: Passwords) -> int:
    """Create the missing demo users; existing ones (and their passwords) stay as they are."""
    created = 0
    for email, password, role in DEMO_USERS:
        if await repository.by_email(email) is not None:
            continue
        user = await repository.insert_if_absent(
            email=email, password_hash=await passwords.hash(password), role=role
        )
        if user is not None:
            created += 1
            log.info("demo user created", extra={"action": "seed_user", "email": email})
    return created


async def seed_demo_team(
    repository: UserRepository, passwords: Passwords, tenancy: TenancyStore
) -> int:
    """Create what is missing of the demo team: its users, organizations, memberships and
    projects. What exists stays as it is (a role changed by hand, a renamed project)."""
    created = 0
    for account in DEMO_TEAM:
        if await repository.by_email(account.email) is None:
            hashed = await passwords.hash(account.password)
            if await repository.insert_if_absent(
                email=account.email, password_hash=hashed, role="user"
            ):
                created += 1
    for demo in DEMO_ORGANIZATIONS:
        ids = {}
        for email, _ in demo.members:
            user = await repository.by_email(email)
            assert user is not None  # seeded above
            ids[email] = user.id
        organization = await tenancy.organization_by_slug(demo.slug)
        if organization is None:
            try:
                organization = await tenancy.create_organization(
                    name=demo.name,
                    slug=demo.slug,
                    owner_id=ids[demo.members[0][0]],
                    audit=AuditEntry(AuditAction.ORGANIZATION_CREATED, SEEDER, subject=demo.slug),
                )
                created += 1
            except Conflict:  # another replica seeding at the same moment
                organization = await tenancy.organization_by_slug(demo.slug)
                assert organization is not None
        for email, role in demo.members[1:]:
            added = AuditEntry(
                AuditAction.MEMBER_ADDED,
                SEEDER,
                organization.id,
                subject=email,
                details={"role": role.value},
            )
            created += await tenancy.add_member(organization.id, ids[email], role, audit=added)
        for name, slug in demo.projects:
            made = AuditEntry(AuditAction.PROJECT_CREATED, SEEDER, organization.id, subject=slug)
            try:
                await tenancy.create_project(
                    org_id=organization.id,
                    name=name,
                    slug=slug,
                    created_by=demo.members[0][0],
                    audit=made,
                )
                created += 1
            except Conflict:
                pass  # there already
    if created:
        log.info("demo team seeded", extra={"action": "seed_team", "count": created})
    return created


async def seed_database(database_url: str, *, team: bool = False) -> int:
    """The demo users (and with ``team``, the demo team) in the database at ``database_url``."""
    engine = create_engine(database_url, pool_size=1)
    try:
        users, passwords = UserRepository(engine), Passwords()
        created = await seed_demo_users(users, passwords)
        if team:
            created += await seed_demo_team(users, passwords, TenancyStore(engine))
        return created
    finally:
        await engine.dispose()
