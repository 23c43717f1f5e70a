"""The scheduler's internal API, for the commands on the tables it owns (schedules, named
retry policies, a project's queues and weight, dead letters and their audit log).

The scheduler is the one writer of those tables (docs/architecture.md); the dashboard checks
a request and sends it there (``jobs_common.schedule_commands``,
``jobs_common.retry_policy_commands``, ``jobs_common.dead_letter_commands``), then answers
with what the scheduler decided. Each
replica serves the API: a call goes to the first of ``urls`` that accepts the connection, so
a replica that is down is passed over. A call that reached one and then failed (a timeout)
is not sent again: it may have been applied."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import httpx

from jobs_common.auth import Identity
from jobs_common.dead_letter_commands import (
    DEAD_LETTERS_PATH,
    BulkCommand,
    BulkDone,
    Command,
    DiscardCommand,
    RequeueCommand,
    Resolved,
)
from jobs_common.errors import UpstreamUnavailable, error_from_answer
from jobs_common.project_flow import ProjectFlowChange, ProjectFlowView, project_flow_path
from jobs_common.queue_commands import QUEUES_PATH, QueueCreate, QueuePatch, QueueView
from jobs_common.retry_policy_commands import (
    RETRY_POLICIES_PATH,
    RetryPolicyCreate,
    RetryPolicyView,
)
from jobs_common.schedule_commands import (
    SCHEDULES_PATH,
    UPSERT_PATH,
    NewSchedule,
    RunNow,
    ScheduleEdit,
    ScheduleRun,
    ScheduleView,
    schedule_path,
)


class SchedulerApi:
    def __init__(
        self, client: httpx.AsyncClient, urls: Sequence[str], *, internal_token: str
    ) -> None:
        self.client = client
        self.urls = [url.rstrip("/") for url in urls]
        self.internal_token = internal_token

    async def _call(
        self, method: str, path: str, identity: Identity, body: dict[str, Any] | None = None
    ) -> httpx.Response:
        headers = identity.headers(self.internal_token)
        for url in self.urls:
            try:
                return await self.client.request(method, url + path, json=body, headers=headers)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                continue  # never sent: another replica may take it
            except httpx.HTTPError as exc:
                raise UpstreamUnavailable("the scheduler did not answer; retry") from exc
        raise UpstreamUnavailable("no scheduler is reachable; retry")

    async def _answer(
        self, method: str, path: str, identity: Identity, body: dict[str, Any] | None = None
    ) -> Any:
        """The JSON of a 200 or 201; raises the error of any other answer."""
        answer = await self._call(method, path, identity, body)
        if answer.status_code not in (200, 201):
            raise error_from_answer(answer.status_code, _json(answer), owner="scheduler")
        return answer.json()

    async def _view(
        self, method: str, path: str, identity: Identity, body: dict[str, Any] | None = None
    ) -> ScheduleView:
        return ScheduleView.model_validate(await self._answer(method, path, identity, body))

    async def create_schedule(self, command: NewSchedule, identity: Identity) -> ScheduleView:
        """Raises Conflict (the caller has the name), TooManyRequests (a cap)."""
        body = command.model_dump(mode="json", by_alias=True)
        return await self._view("POST", SCHEDULES_PATH, identity, body)

    async def upsert_schedule(
        self, command: NewSchedule, identity: Identity
    ) -> tuple[ScheduleView, bool]:
        """The schedule, and True when it was created (False: updated or unchanged). Raises
        Conflict (declared in code), TooManyRequests (a cap)."""
        body = command.model_dump(mode="json", by_alias=True)
        answer = await self._call("PUT", UPSERT_PATH, identity, body)
        if answer.status_code not in (200, 201):
            raise error_from_answer(answer.status_code, _json(answer), owner="scheduler")
        return ScheduleView.model_validate(answer.json()), answer.status_code == 201

    async def edit_schedule(
        self, schedule_id: uuid.UUID, command: ScheduleEdit, identity: Identity
    ) -> ScheduleView:
        """Raises NotFound, Conflict (declared in code), TooManyRequests (a cap)."""
        body = command.model_dump(mode="json", by_alias=True)
        return await self._view("PUT", schedule_path(schedule_id), identity, body)

    async def run_schedule(
        self, schedule_id: uuid.UUID, key: str, identity: Identity
    ) -> ScheduleRun:
        """The run's job (recorded by then). Raises NotFound, Conflict (no usable template)."""
        answer = await self._call(
            "POST",
            f"{schedule_path(schedule_id)}/run",
            identity,
            RunNow(key=key).model_dump(mode="json", by_alias=True),
        )
        if answer.status_code != 202:
            raise error_from_answer(answer.status_code, _json(answer), owner="scheduler")
        return ScheduleRun.model_validate(answer.json())

    async def set_paused(
        self, schedule_id: uuid.UUID, identity: Identity, *, paused: bool
    ) -> ScheduleView:
        """Raises NotFound (not the caller's, or gone)."""
        action = "pause" if paused else "resume"
        return await self._view("POST", f"{SCHEDULES_PATH}/{schedule_id}/{action}", identity)

    async def delete_schedule(self, schedule_id: uuid.UUID, identity: Identity) -> None:
        """Raises NotFound (not the caller's, or gone)."""
        answer = await self._call("DELETE", f"{SCHEDULES_PATH}/{schedule_id}", identity)
        if answer.status_code != 204:
            raise error_from_answer(answer.status_code, _json(answer), owner="scheduler")

    async def create_policy(self, policy: RetryPolicyCreate, identity: Identity) -> RetryPolicyView:
        """Raises Conflict (the name is taken)."""
        body = policy.model_dump(mode="json", by_alias=True)
        stored = await self._answer("POST", RETRY_POLICIES_PATH, identity, body)
        return RetryPolicyView.model_validate(stored)

    async def create_queue(self, command: QueueCreate, identity: Identity) -> QueueView:
        """Raises Conflict (the project has the name), ValidationFailed (no such policy)."""
        body = command.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return QueueView.model_validate(await self._answer("POST", QUEUES_PATH, identity, body))

    async def change_queue(
        self, queue_id: uuid.UUID, patch: QueuePatch, identity: Identity
    ) -> QueueView:
        """Raises NotFound (not the caller's, or gone), ValidationFailed (no such policy)."""
        body = patch.model_dump(mode="json", by_alias=True, exclude_unset=True)
        path = f"{QUEUES_PATH}/{queue_id}"
        return QueueView.model_validate(await self._answer("PATCH", path, identity, body))

    async def set_queue_paused(
        self, queue_id: uuid.UUID, identity: Identity, *, paused: bool
    ) -> QueueView:
        path = f"{QUEUES_PATH}/{queue_id}/{'pause' if paused else 'resume'}"
        return QueueView.model_validate(await self._answer("POST", path, identity))

    async def delete_queue(self, queue_id: uuid.UUID, identity: Identity) -> None:
        """Raises NotFound (not the caller's, or gone), Conflict (unfinished jobs)."""
        answer = await self._call("DELETE", f"{QUEUES_PATH}/{queue_id}", identity)
        if answer.status_code != 204:
            raise error_from_answer(answer.status_code, _json(answer), owner="scheduler")

    async def set_project_flow(
        self, project_id: uuid.UUID, change: ProjectFlowChange, identity: Identity
    ) -> ProjectFlowView:
        """Raises NotFound (not a project where the caller is an admin). Sends the fields
        given only: the others stay as they are."""
        body = change.model_dump(mode="json", by_alias=True, exclude_unset=True)
        stored = await self._answer("PUT", project_flow_path(project_id), identity, body)
        return ProjectFlowView.model_validate(stored)

    async def requeue_dead_letter(
        self, dead_letter_id: uuid.UUID, command: RequeueCommand, identity: Identity
    ) -> Resolved:
        """Raises NotFound (not the caller's, or gone), Conflict (resolved, or not dead)."""
        return await self._on_letter("requeue", dead_letter_id, command, identity)

    async def discard_dead_letter(
        self, dead_letter_id: uuid.UUID, command: DiscardCommand, identity: Identity
    ) -> Resolved:
        """Raises NotFound (not the caller's, or gone), Conflict (resolved)."""
        return await self._on_letter("discard", dead_letter_id, command, identity)

    async def _on_letter(
        self, action: str, dead_letter_id: uuid.UUID, command: Command, identity: Identity
    ) -> Resolved:
        body = command.model_dump(mode="json", by_alias=True)
        path = f"{DEAD_LETTERS_PATH}/{dead_letter_id}/{action}"
        return Resolved.model_validate(await self._answer("POST", path, identity, body))

    async def dead_letters_bulk(self, command: BulkCommand, identity: Identity) -> BulkDone:
        body = command.model_dump(mode="json", by_alias=True)
        path = f"{DEAD_LETTERS_PATH}/bulk"
        return BulkDone.model_validate(await self._answer("POST", path, identity, body))


def _json(answer: httpx.Response) -> Any:
    try:
        return answer.json()
    except ValueError:
        return None
