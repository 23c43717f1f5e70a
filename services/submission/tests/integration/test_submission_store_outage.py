"""MongoDB unreachable while the submission service runs: a submission is answered 503 with
Retry-After (the documented "retry later"), never 500, and nothing is stored twice once it is
back (chaos suite, issue 19: a MongoDB outage answered 500 "unhandled error")."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from jobs_testing.private_infra import PrivateMongo

from .conftest import AppFactory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.fixture
def own_mongo() -> Iterator[PrivateMongo]:
    mongo = PrivateMongo()
    mongo.start()
    try:
        yield mongo
    finally:
        mongo.close()


async def test_a_submission_while_mongodb_is_down_is_a_503_to_retry(
    app_factory: AppFactory, own_mongo: PrivateMongo
) -> None:
    url = f"{own_mongo.url}/?serverSelectionTimeoutMS=1000"
    async with app_factory(mongo_url=url, mongo_db=f"outage_{uuid.uuid4().hex[:8]}") as app:
        await asyncio.to_thread(own_mongo.kill)
        key = uuid.uuid4().hex
        refused = await app.submit(key=key)
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "service_unavailable"
        assert refused.headers["Retry-After"] == "1"
        await asyncio.to_thread(own_mongo.start)
        accepted = await app.submit(key=key)
        assert accepted.status_code == 202, accepted.text
