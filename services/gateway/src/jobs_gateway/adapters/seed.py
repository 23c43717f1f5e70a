"""Idempotent demo users (admin@test.com / admin123, user@test.com / user123)."""

from __future__ import annotations

import logging

from jobs_common.db import create_engine
from jobs_gateway.adapters.passwords import Passwords
from jobs_gateway.adapters.users import UserRepository
from jobs_gateway.domain.users import DEMO_USERS

log = logging.getLogger(__name__)


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


async def seed_database(database_url: str) -> int:
    engine = create_engine(database_url, pool_size=1)
    try:
        return await seed_demo_users(UserRepository(engine), Passwords())
    finally:
        await engine.dispose()
