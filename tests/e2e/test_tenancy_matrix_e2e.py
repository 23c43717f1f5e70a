"""The scoping matrix (issue 32, point 8): every role against every resource and action through
the gateway of the real stack, each cell asserted against a table written from the roles of
docs/tenancy.md.

Acme has the project ``web``: Olga its owner, Adam an admin, Mia a member, Vic a viewer; the
project has a member key and a viewer key; Sam owns another organization; the platform admin
stands above them all. A cell that changes something acts on a resource of its own (a dead
job, a schedule, a project...), so no cell depends on another's order; a refused cell must
leave its resource as it was (checked at the end).
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from .conftest import wait_for_job

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PASSWORD = "matrix-password-1"
ROLES = ("owner", "admin", "member", "viewer", "platform", "key_member", "key_viewer", "stranger")
QUICK = {"immediateFailureRate": 0, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}
DIES = {"immediateFailureRate": 1, "failureRate": 0, "minSeconds": 0, "maxSeconds": 0}
SEEN, HIDDEN = "seen", "hidden"  # a listing shows the resource, or does not


def expect(**codes: int | str) -> dict[str, int | str]:
    """A row of the table: ``all`` for every role not named."""
    default = codes.pop("all", None)
    row = {role: codes.get(role, default) for role in ROLES}
    assert None not in row.values(), row
    return row  # type: ignore[return-value]


# Who may do what (docs/tenancy.md, "Roles"): reading needs a role in the project; submitting,
# retrying, cancelling, requeueing and discarding a member; schedules, retry policies,
# projects and keys an admin; members the owner. Keys act in their project with their role
# and never manage organizations, projects or keys (403). Strangers get 404, never 403.
READ = expect(all=200, stranger=404)
LISTED = expect(all=SEEN, stranger=HIDDEN)
SUBMIT = expect(all=202, viewer=403, key_viewer=403, stranger=404)
MEMBER_ACTS = expect(all=202, viewer=403, key_viewer=403, stranger=404)
ADMIN_ONLY = expect(all=403, owner=201, admin=201, platform=201, stranger=404)
PERSONS = expect(all=200, key_member=403, key_viewer=403, stranger=404)


@dataclass
class World:
    gateway: str
    clients: dict[str, httpx.AsyncClient]
    tokens: dict[str, str]
    org: dict[str, Any]
    web: dict[str, Any]
    owner: str  # Olga's email: listings narrowed to her rows stay short on a busy stack
    job: str  # succeeded
    batch: str
    schedule: str
    policy: str
    letter: str
    tom: str  # a member whose role the owner changes
    pools: dict[str, list[str]] = field(default_factory=dict)
    names: itertools.count[int] = field(default_factory=itertools.count)
    taken: tuple[str, str] | None = None  # the pool and id the current cell took
    refused: list[tuple[str, str]] = field(default_factory=list)

    def take(self, pool: str) -> str:
        taken = self.pools[pool].pop()
        self.taken = (pool, taken)
        return taken

    def name(self, prefix: str) -> str:
        return f"{prefix}-{next(self.names)}"


async def register(gateway: str, who: str) -> tuple[str, str]:
    email = f"{who}-{uuid.uuid4().hex[:8]}@matrix.example.com"
    async with httpx.AsyncClient(base_url=gateway, timeout=10) as http:
        made = await http.post("/auth/register", json={"email": email, "password": PASSWORD})
        assert made.status_code == 202, made.text
        login = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert login.status_code == 200, login.text
    return email, str(login.json()["token"])


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


@pytest.fixture(scope="module")
async def world(gateway_url: str) -> AsyncIterator[World]:
    people = ("owner", "admin", "member", "viewer", "stranger", "tom")
    made = await asyncio.gather(*(register(gateway_url, who) for who in people))
    emails = {who: email for who, (email, _) in zip(people, made, strict=True)}
    tokens = {who: token for who, (_, token) in zip(people, made, strict=True)}
    async with httpx.AsyncClient(base_url=gateway_url, timeout=10) as http:
        login = await http.post(
            "/auth/login", json={"email": "admin@test.com", "password": "admin123"}
        )
        tokens["platform"] = ok(login)["token"]
    clients = {
        who: httpx.AsyncClient(
            base_url=gateway_url, timeout=15, headers={"Authorization": f"Bearer {token}"}
        )
        for who, token in tokens.items()
    }
    olga = clients["owner"]
    org = ok(await olga.post("/api/organizations", json={"name": "Matrix Acme"}), 201)
    for who, role in (("admin", "admin"), ("member", "member"), ("viewer", "viewer")):
        body = {"email": emails[who], "role": role}
        ok(await olga.post(f"/api/organizations/{org['id']}/members", json=body), 201)
    body = {"email": emails["tom"], "role": "viewer"}
    tom = ok(await olga.post(f"/api/organizations/{org['id']}/members", json=body), 201)
    web = ok(await olga.post("/api/projects", json={"orgId": org["id"], "name": "web"}), 201)
    ok(await clients["stranger"].post("/api/organizations", json={"name": "Matrix Beta"}), 201)
    keys = f"/api/projects/{web['id']}/api-keys"
    for role in ("member", "viewer"):
        key = ok(await olga.post(keys, json={"name": role, "role": role}), 201)["key"]
        clients[f"key_{role}"] = httpx.AsyncClient(
            base_url=gateway_url, timeout=15, headers={"X-API-Key": key}
        )
    in_web = {"X-Project": web["id"]}

    async def submit(payload: dict[str, Any], **extra: Any) -> str:
        body = {"type": "simulate", "priority": 2, "payload": payload, **extra}
        answer = ok(await olga.post("/api/jobs", json=body, headers=in_web), 202)
        return str(answer["jobId"])

    job = await submit(QUICK)
    per_role = len(ROLES)  # each role's call takes its own: 3 pools of dead jobs, 1 of delayed
    dying = [await submit(DIES, maxAttempts=1) for _ in range(1 + 3 * per_role)]
    later = [await submit(QUICK, delaySeconds=3600) for _ in range(per_role)]
    spec = {"type": "simulate", "priority": 2, "payload": QUICK}
    batch = ok(await olga.post("/api/batches", json={"jobs": [spec]}, headers=in_web), 202)
    await wait_for_job(olga, job, {"succeeded"})
    for dead in dying:
        await wait_for_job(olga, dead, {"dead"})
    for delayed in later:
        await wait_for_job(olga, delayed, {"scheduled"})
    letters = ok(await olga.get("/api/dead-letters?pageSize=100", headers=in_web))["items"]
    letter_of = {item["jobId"]: item["id"] for item in letters}
    shared = schedule_body("aaa-matrix")  # first by name in every listing
    schedule = ok(await olga.post("/api/schedules", json=shared, headers=in_web), 201)
    made = await olga.post("/api/retry-policies", json=policy_body("matrix"), headers=in_web)
    policy = ok(made, 201)
    world = World(
        gateway=gateway_url,
        clients=clients,
        tokens=tokens,
        org=org,
        web=web,
        owner=emails["owner"],
        job=job,
        batch=str(batch["batchId"]),
        schedule=str(schedule["id"]),
        policy=str(policy["name"]),
        letter=letter_of[dying[0]],
        tom=str(tom["userId"]),
        pools={
            "retry": dying[1 : 1 + per_role],
            "requeue": [letter_of[dead] for dead in dying[1 + per_role : 1 + 2 * per_role]],
            "discard": [letter_of[dead] for dead in dying[1 + 2 * per_role :]],
            "cancel": later,
        },
    )
    try:
        yield world
    finally:
        for client in clients.values():
            await client.aclose()


def schedule_body(name: str) -> dict[str, Any]:
    template = {"type": "simulate", "priority": 2, "payload": QUICK}
    return {"name": name, "cron": "0 3 * * *", "timezone": "UTC", "jobTemplate": template}


def policy_body(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "strategy": "fixed",
        "baseDelayMs": 100,
        "multiplier": 1,
        "maxDelayMs": 100,
        "jitter": False,
    }


Act = Callable[[httpx.AsyncClient, World], Awaitable[httpx.Response]]


def in_web(w: World) -> dict[str, str]:
    return {"X-Project": w.web["id"]}


async def new_schedule(w: World) -> str:
    body = schedule_body(w.name("cell"))
    made = ok(await w.clients["owner"].post("/api/schedules", json=body, headers=in_web(w)), 201)
    return str(made["id"])


async def new_project(w: World) -> str:
    body = {"orgId": w.org["id"], "name": w.name("doomed")}
    return str(ok(await w.clients["owner"].post("/api/projects", json=body), 201)["id"])


async def new_key(w: World) -> str:
    keys = f"/api/projects/{w.web['id']}/api-keys"
    made = await w.clients["owner"].post(keys, json={"name": w.name("k"), "role": "viewer"})
    return str(ok(made, 201)["id"])


async def new_member(w: World) -> str:
    email, _ = await register(w.gateway, "leaver")
    members = f"/api/organizations/{w.org['id']}/members"
    made = await w.clients["owner"].post(members, json={"email": email, "role": "viewer"})
    return str(ok(made, 201)["userId"])


@dataclass(frozen=True)
class Cell:
    resource: str
    action: str
    act: Act
    expected: dict[str, int | str]


def c(resource: str, action: str, expected: dict[str, int | str]) -> Any:
    def register_cell(act: Act) -> Cell:
        return Cell(resource, action, act, expected)

    return register_cell


@c("job", "list", LISTED)
async def _list_jobs(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/jobs", params={"pageSize": 100, "submittedBy": w.owner})


@c("job", "read", READ)
async def _read_job(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/jobs/{w.job}")


@c("job", "create", SUBMIT)
async def _submit(client: httpx.AsyncClient, w: World) -> httpx.Response:
    body = {"type": "simulate", "priority": 2, "payload": QUICK}
    return await client.post("/api/jobs", json=body, headers=in_web(w))


@c("job", "retry", MEMBER_ACTS)
async def _retry(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(f"/api/jobs/{w.take('retry')}/retry")


@c("job", "cancel", expect(all=200, viewer=403, key_viewer=403, stranger=404))
async def _cancel(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(f"/api/jobs/{w.take('cancel')}/cancel")


@c("logs", "read", READ)
async def _logs(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/jobs/{w.job}/logs")


@c("batch", "list", LISTED)
async def _list_batches(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/batches", params={"pageSize": 100, "submittedBy": w.owner})


@c("batch", "read", READ)
async def _read_batch(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/batches/{w.batch}")


@c("batch", "create", SUBMIT)
async def _submit_batch(client: httpx.AsyncClient, w: World) -> httpx.Response:
    spec = {"type": "simulate", "priority": 2, "payload": QUICK}
    return await client.post("/api/batches", json={"jobs": [spec]}, headers=in_web(w))


@c("schedule", "list", LISTED)
async def _list_schedules(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/schedules?pageSize=100")


@c("schedule", "read", READ)
async def _read_schedule(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/schedules/{w.schedule}")


@c("schedule", "create", ADMIN_ONLY)
async def _create_schedule(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(
        "/api/schedules", json=schedule_body(w.name("made")), headers=in_web(w)
    )


@c("schedule", "change", {**ADMIN_ONLY, "owner": 200, "admin": 200, "platform": 200})
async def _pause_schedule(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(f"/api/schedules/{await new_schedule(w)}/pause")


@c("schedule", "delete", {**ADMIN_ONLY, "owner": 204, "admin": 204, "platform": 204})
async def _delete_schedule(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.delete(f"/api/schedules/{await new_schedule(w)}")


@c("dead letter", "list", LISTED)
async def _list_letters(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/dead-letters", params={"pageSize": 100, "submittedBy": w.owner})


@c("dead letter", "read", READ)
async def _read_letter(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/dead-letters/{w.letter}")


@c("dead letter", "requeue", MEMBER_ACTS)
async def _requeue(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(f"/api/dead-letters/{w.take('requeue')}/requeue")


@c("dead letter", "change", expect(all=200, viewer=403, key_viewer=403, stranger=404))
async def _discard(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post(f"/api/dead-letters/{w.take('discard')}/discard")


@c("retry policy", "list", LISTED)
async def _list_policies(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/retry-policies")


@c("retry policy", "create", {**ADMIN_ONLY, "key_member": 403, "key_viewer": 403})
async def _create_policy(client: httpx.AsyncClient, w: World) -> httpx.Response:
    body = policy_body(w.name("made"))
    return await client.post("/api/retry-policies", json=body, headers=in_web(w))


@c("project", "list", {**LISTED, "key_member": 403, "key_viewer": 403, "stranger": 404})
async def _list_projects(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/projects", params={"orgId": w.org["id"], "pageSize": 100})


@c("project", "read", PERSONS)
async def _read_project(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/projects/{w.web['id']}")


@c("project", "create", {**ADMIN_ONLY, "key_member": 403, "key_viewer": 403})
async def _create_project(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.post("/api/projects", json={"orgId": w.org["id"], "name": w.name("p")})


@c("project", "change", {**ADMIN_ONLY, "owner": 200, "admin": 200, "platform": 200})
async def _rename_project(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.patch(f"/api/projects/{w.web['id']}", json={"name": "web"})


@c("project", "delete", {**ADMIN_ONLY, "owner": 204, "admin": 204, "platform": 204})
async def _delete_project(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.delete(f"/api/projects/{await new_project(w)}")


@c("member", "list", PERSONS)
async def _list_members(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/organizations/{w.org['id']}/members")


OWNER_ONLY = expect(all=403, stranger=404)


@c("member", "create", {**OWNER_ONLY, "owner": 201, "platform": 201})
async def _add_member(client: httpx.AsyncClient, w: World) -> httpx.Response:
    email, _ = await register(w.gateway, "joiner")
    body = {"email": email, "role": "viewer"}
    return await client.post(f"/api/organizations/{w.org['id']}/members", json=body)


@c("member", "change", {**OWNER_ONLY, "owner": 200, "platform": 200})
async def _change_member(client: httpx.AsyncClient, w: World) -> httpx.Response:
    path = f"/api/organizations/{w.org['id']}/members/{w.tom}"
    return await client.patch(path, json={"role": "viewer"})


@c("member", "delete", {**OWNER_ONLY, "owner": 204, "platform": 204})
async def _remove_member(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.delete(f"/api/organizations/{w.org['id']}/members/{await new_member(w)}")


@c("key", "list", {**ADMIN_ONLY, "owner": 200, "admin": 200, "platform": 200})
async def _list_keys(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get(f"/api/projects/{w.web['id']}/api-keys")


@c("key", "create", ADMIN_ONLY)
async def _create_key(client: httpx.AsyncClient, w: World) -> httpx.Response:
    body = {"name": w.name("key"), "role": "viewer"}
    return await client.post(f"/api/projects/{w.web['id']}/api-keys", json=body)


@c("key", "delete", {**ADMIN_ONLY, "owner": 204, "admin": 204, "platform": 204})
async def _revoke_key(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.delete(f"/api/projects/{w.web['id']}/api-keys/{await new_key(w)}")


@c("analytics", "read", READ)
async def _analytics(client: httpx.AsyncClient, w: World) -> httpx.Response:
    return await client.get("/api/jobs/analytics", params={"projectId": w.web["id"]})


CELLS: list[Cell] = [value for value in dict(globals()).values() if isinstance(value, Cell)]
# What a listing must show for SEEN: (the key of its items, the shared resource's id).
LISTED_ID: dict[str, tuple[str, Callable[[World], str]]] = {
    "job": ("jobId", lambda w: w.job),
    "batch": ("batchId", lambda w: w.batch),
    "schedule": ("id", lambda w: w.schedule),
    "dead letter": ("id", lambda w: w.letter),
    "retry policy": ("name", lambda w: w.policy),
    "project": ("id", lambda w: w.web["id"]),
}


def outcome(cell: Cell, response: httpx.Response, w: World) -> int | str:
    if cell.resource not in LISTED_ID or cell.action != "list" or response.status_code != 200:
        return response.status_code
    key, wanted = LISTED_ID[cell.resource]
    shown = {str(item[key]) for item in response.json()["items"]}
    return SEEN if wanted(w) in shown else HIDDEN


UNCHANGED = {"retry": "dead", "cancel": "scheduled"}  # a job's status after a refused command


async def test_every_role_against_every_resource_and_action(world: World) -> None:
    covered = {(cell.resource, cell.action) for cell in CELLS}
    for resource in ("job", "batch", "schedule", "dead letter", "project", "member", "key"):
        assert {(resource, "list"), (resource, "create")} & covered, resource
    wrong: list[str] = []
    for cell in CELLS:
        for role in ROLES:
            world.taken = None
            answer = await cell.act(world.clients[role], world)
            if world.taken is not None and answer.status_code >= 400:
                world.refused.append(world.taken)
            got, want = outcome(cell, answer, world), cell.expected[role]
            if got != want:
                wrong.append(
                    f"{cell.resource} {cell.action} as {role}: {got}, expected {want} "
                    f"({answer.text[:160]})"
                )
            if isinstance(got, int) and got >= 400:
                body = answer.json()
                assert {"error", "message", "details"} <= set(body), body
    assert wrong == [], "\n".join(wrong)
    owner = world.clients["owner"]
    for pool, taken in world.refused:  # a refused command left its resource as it was
        if pool in UNCHANGED:
            job = ok(await owner.get(f"/api/jobs/{taken}"))
            assert job["status"] == UNCHANGED[pool], (pool, job)
        else:
            letter = ok(await owner.get(f"/api/dead-letters/{taken}"))
            assert letter["resolvedAt"] is None, (pool, letter)
    assert len(world.refused) == 4 * 3  # viewer, viewer key, stranger: each of four pools


async def live_outcome(world: World, role: str) -> str:
    url = world.gateway.replace("http://", "ws://", 1) + "/ws/events"
    url += f"?token={quote(world.tokens[role], safe='')}&projectId={world.web['id']}"
    async with connect(url) as socket:
        try:
            frame = orjson.loads(await asyncio.wait_for(socket.recv(), 10))
        except ConnectionClosed as closed:
            return f"closed {closed.rcvd.code if closed.rcvd else None}"
    return str(frame["type"])


async def test_live_events_of_a_project_for_its_people_only(world: World) -> None:
    """A project's WebSocket opens for every role in it and the platform admin; a stranger's
    is closed with 4400 (keys take no WebSocket: it authenticates a person's token)."""
    people = ("owner", "admin", "member", "viewer", "platform", "stranger")
    got = {role: await live_outcome(world, role) for role in people}
    assert got == {role: "hello" for role in people[:-1]} | {"stranger": "closed 4400"}
