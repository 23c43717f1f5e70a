"""Submissions and their projects (docs/tenancy.md), through the service's API over real
MongoDB and RabbitMQ, with the scope the gateway forwards: the project a job goes to and who
may submit there, the project carried to the scheduler, parents of the same project only,
status reads by project, and Idempotency-Keys unique per project (a key stored before
projects still replays)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from jobs_common.auth import Identity
from jobs_common.tenancy import OrgRole, personal_project_id

from .conftest import EMAIL_JOB, USER, AppFactory, Broker, wait_until

pytestmark = pytest.mark.integration

TEAM = str(uuid.uuid4())  # a shared project: Ann is a member, Vic a viewer
OTHER_TEAM = str(uuid.uuid4())
ANN_PERSONAL = str(personal_project_id("ann@test.com"))
BEN_PERSONAL = str(personal_project_id("ben@test.com"))


def scoped(
    email: str, acting: str | None, grants: dict[str, OrgRole], key: str | None = None
) -> Identity:
    return Identity(
        user_id=email,
        email=email,
        role="user",
        project_id=acting,
        project_role=grants.get(acting) if acting else None,
        grants=tuple(grants.items()),
        api_key=key,
    )


ANN = scoped("ann@test.com", ANN_PERSONAL, {ANN_PERSONAL: OrgRole.OWNER, TEAM: OrgRole.MEMBER})
ANN_IN_TEAM = scoped("ann@test.com", TEAM, {TEAM: OrgRole.MEMBER})
BEN_IN_TEAM = scoped("ben@test.com", TEAM, {TEAM: OrgRole.ADMIN})
VIC = scoped("vic@test.com", TEAM, {TEAM: OrgRole.VIEWER})
KEY = scoped("ann@test.com", TEAM, {TEAM: OrgRole.MEMBER}, key="abcd1234")


def status_of(response: Any, code: int) -> Any:
    assert response.status_code == code, response.text
    return response.json()


async def test_a_job_goes_to_the_project_named_or_the_callers_default_and_on_to_the_scheduler(
    app_factory: AppFactory, broker: Broker
) -> None:
    async with app_factory() as app:
        await broker.drain_submitted()
        personal = status_of(await app.submit(identity=ANN), 202)["jobId"]
        named = status_of(await app.submit({**EMAIL_JOB, "projectId": TEAM}, identity=ANN), 202)
        acting = status_of(await app.submit(identity=ANN_IN_TEAM), 202)["jobId"]
        by_key = status_of(await app.submit(identity=KEY), 202)["jobId"]
        expected = {
            personal: ANN_PERSONAL,
            named["jobId"]: TEAM,
            acting: TEAM,
            by_key: TEAM,
        }
        for job_id, project in expected.items():
            view = status_of(
                await app.client.get(f"/api/v1/jobs/{job_id}/status", headers=app.headers(ANN)),
                200,
            )
            assert view["projectId"] == project
        relayed: dict[str, str] = {}
        keys: dict[str, str | None] = {}

        async def all_relayed() -> bool:
            for job in await broker.drain_jobs():
                relayed[str(job.job_id)] = str(job.project())
                keys[str(job.job_id)] = job.api_key
            return set(expected) <= set(relayed)

        await wait_until(all_relayed)
        assert {job: relayed[job] for job in expected} == expected
        # Who submitted travels too: the key's prefix, or None for a person.
        assert {job: keys[job] for job in expected} == {
            personal: None,
            named["jobId"]: None,
            acting: None,
            by_key: "abcd1234",
        }
        # Unscoped (a backend's own call, or a release before projects): the owner's project.
        legacy = status_of(await app.submit(identity=USER), 202)["jobId"]
        view = await app.client.get(f"/api/v1/jobs/{legacy}/status", headers=app.headers(USER))
        assert status_of(view, 200)["projectId"] == str(personal_project_id(USER.email))


async def test_only_a_member_of_a_project_submits_there(app_factory: AppFactory) -> None:
    async with app_factory() as app:
        for body, identity, code in (
            ({**EMAIL_JOB, "projectId": OTHER_TEAM}, ANN, 404),  # not hers to see
            ({**EMAIL_JOB, "projectId": ANN_PERSONAL}, ANN_IN_TEAM, 404),  # narrowed to TEAM
            (EMAIL_JOB, VIC, 403),  # a viewer reads only
            ({**EMAIL_JOB, "projectId": "web"}, ANN, 422),  # an id, not a slug, in the body
        ):
            answer = await app.submit(body, identity=identity)
            assert answer.status_code == code, answer.text
        batch = {"jobs": [EMAIL_JOB], "projectId": OTHER_TEAM}
        assert (await app.submit_batch(batch, identity=ANN)).status_code == 404
        answer = await app.submit_batch({"jobs": [EMAIL_JOB]}, identity=VIC)
        assert answer.status_code == 403
        spec_project = {"jobs": [{**EMAIL_JOB, "projectId": TEAM}]}
        assert (await app.submit_batch(spec_project, identity=ANN)).status_code == 422


async def test_status_and_parents_follow_the_project_not_the_owner(
    app_factory: AppFactory,
) -> None:
    async with app_factory() as app:
        team_job = status_of(await app.submit(identity=ANN_IN_TEAM), 202)["jobId"]
        own_job = status_of(await app.submit(identity=ANN), 202)["jobId"]
        status = f"/api/v1/jobs/{team_job}/status"
        # Ben and Vic see Ann's job in their shared project; Ben does not see her personal one.
        for identity in (BEN_IN_TEAM, VIC, KEY):
            assert (await app.client.get(status, headers=app.headers(identity))).status_code == 200
        hidden = await app.client.get(
            f"/api/v1/jobs/{own_job}/status", headers=app.headers(BEN_IN_TEAM)
        )
        assert hidden.status_code == 404
        # A parent of the same project, whoever submitted it; never one of another project.
        child = {**EMAIL_JOB, "dependsOn": [team_job]}
        assert (await app.submit(child, identity=BEN_IN_TEAM)).status_code == 202
        crossing = await app.submit({**EMAIL_JOB, "dependsOn": [own_job]}, identity=ANN_IN_TEAM)
        assert crossing.status_code == 422
        assert crossing.json()["details"] == [{"field": "dependsOn.0", "message": "unknown job"}]
        batch = await app.submit_batch(
            {"jobs": [{**EMAIL_JOB, "dependsOn": [team_job]}]}, identity=BEN_IN_TEAM
        )
        assert batch.status_code == 202, batch.text
        batch_status = f"/api/v1/batches/{batch.json()['batchId']}/status"
        seen = status_of(await app.client.get(batch_status, headers=app.headers(VIC)), 200)
        assert seen["projectId"] == TEAM
        assert (await app.client.get(batch_status, headers=app.headers(ANN))).status_code == 200
        outsider = scoped("ola@test.com", None, {OTHER_TEAM: OrgRole.OWNER})
        hidden = await app.client.get(batch_status, headers=app.headers(outsider))
        assert hidden.status_code == 404


async def test_idempotency_keys_are_unique_per_project(
    app_factory: AppFactory, collection: Any
) -> None:
    async with app_factory() as app:
        first = status_of(await app.submit(identity=ANN, key="deploy-42"), 202)["jobId"]
        # The same key in another project is another submission ...
        other = await app.submit(identity=ANN_IN_TEAM, key="deploy-42")
        assert status_of(other, 202)["jobId"] != first
        assert "idempotent-replayed" not in other.headers
        # ... and within a project it names one submission: sent again (here through Ann's API
        # key, which acts as her) it replays; another owner or another body is a conflict.
        again = await app.submit(identity=KEY, key="deploy-42")
        assert status_of(again, 202)["jobId"] == other.json()["jobId"]
        assert again.headers["idempotent-replayed"] == "true"
        for body, identity in ((EMAIL_JOB, BEN_IN_TEAM), ({**EMAIL_JOB, "priority": 3}, KEY)):
            assert (await app.submit(body, identity=identity, key="deploy-42")).status_code == 409
        replay = await app.submit(identity=ANN, key="deploy-42")
        assert status_of(replay, 202)["jobId"] == first
        # Batches alike.
        body = {"jobs": [EMAIL_JOB]}
        mine = status_of(await app.submit_batch(body, identity=ANN, key="b-1"), 202)
        team = status_of(await app.submit_batch(body, identity=ANN_IN_TEAM, key="b-1"), 202)
        assert mine["batchId"] != team["batchId"]
        again_batch = await app.submit_batch(body, identity=KEY, key="b-1")
        assert status_of(again_batch, 202)["batchId"] == team["batchId"]
        assert (await app.submit_batch(body, identity=BEN_IN_TEAM, key="b-1")).status_code == 409

        # A submission stored before projects (no projectId, the key in idempotencyKey only)
        # still replays in its owner's personal project, and still blocks a different body.
        legacy_id = str(uuid.uuid4())
        template = await collection.find_one({"_id": first})
        legacy = {
            k: v for k, v in template.items() if k not in ("projectId", "projectIdempotencyKey")
        }
        legacy.update(_id=legacy_id, idempotencyKey="old-key", messageId=str(uuid.uuid4()))
        await collection.insert_one(legacy)
        replayed = await app.submit(identity=ANN, key="old-key")
        assert status_of(replayed, 202)["jobId"] == legacy_id
        assert (
            await app.submit({**EMAIL_JOB, "priority": 1}, identity=ANN, key="old-key")
        ).status_code == 409
        view = await app.client.get(f"/api/v1/jobs/{legacy_id}/status", headers=app.headers(ANN))
        assert status_of(view, 200)["projectId"] == ANN_PERSONAL
