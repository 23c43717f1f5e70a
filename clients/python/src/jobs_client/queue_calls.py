"""The queue operations of the public API (``/api/queues``) as
:class:`~jobs_client.exchange.Call` s, built like those of :mod:`jobs_client.calls`, and the
settings a change may give (:class:`QueueSettings`): ``jobs.queues`` of both clients builds
its requests here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

import httpx

from jobs_client.calls import _id, _params
from jobs_client.errors import NotFound
from jobs_client.exchange import Call
from jobs_client.models import Page, parse_page
from jobs_client.queue_models import ConcurrencyKey, Queue, RateLimit

_QUEUE_ID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


class QueueSettings(TypedDict, total=False):
    """The settings of a queue that ``create``, ``update`` and ``set`` take, by keyword. One
    left out is not sent, so it stays as it is; None is sent as null, which clears it (no
    limit, no default). A rate may be text (``"20/s"``), a concurrency key too
    (``"customerId:2"``)."""

    max_concurrency: int | None
    rate: RateLimit | str | None
    concurrency_key: ConcurrencyKey | str | None
    default_priority: int | None
    default_timeout_seconds: int | None
    default_retry_policy: str | None


def is_queue_id(value: str) -> bool:
    """A uuid in its usual form names a queue by id; anything else is a name. (A name could
    take that form too: such a queue is reached by id only.)"""
    return _QUEUE_ID.fullmatch(value) is not None


def no_such_queue(name: str) -> NotFound:
    """What naming a queue the project does not have raises (the listing answered, empty)."""
    return NotFound(f"no queue named {name!r} in the project", code="not_found")


def queue_settings(**settings: Unpack[QueueSettings]) -> dict[str, Any]:
    """The settings given, camelCase; None is kept (null: no limit, no default). A rate
    (``"20/s"``) or a key (``"customerId:2"``) given as text is parsed here, before anything
    is sent: ``ValueError`` when it is not one; ``TypeError`` for a name that is no setting."""
    unknown = sorted(settings.keys() - QueueSettings.__optional_keys__)
    if unknown:
        raise TypeError(f"not a queue setting: {', '.join(unknown)}")
    body: dict[str, Any] = {}
    if "max_concurrency" in settings:
        body["maxConcurrency"] = settings["max_concurrency"]
    if "rate" in settings:
        rate = settings["rate"]
        parsed = RateLimit.parse(rate) if isinstance(rate, str) else rate
        body["rateLimit"] = None if parsed is None else parsed.to_json()
    if "concurrency_key" in settings:
        text_or_key = settings["concurrency_key"]
        key = ConcurrencyKey.parse(text_or_key) if isinstance(text_or_key, str) else text_or_key
        body["concurrencyKey"] = None if key is None else key.to_json()
    if "default_priority" in settings:
        body["defaultPriority"] = settings["default_priority"]
    if "default_timeout_seconds" in settings:
        body["defaultTimeoutSeconds"] = settings["default_timeout_seconds"]
    if "default_retry_policy" in settings:
        body["defaultRetryPolicy"] = settings["default_retry_policy"]
    return body


def _queue(response: httpx.Response) -> Queue:
    return Queue.from_json(response.json())


def list_queues(*, name: str | None, page_number: int, page_size: int) -> Call[Page[Queue]]:
    """The project's queues (``name``: only the one of that name). The project is the
    client's (``X-Project``), else the caller's default one."""
    return Call(
        "GET",
        "/api/queues",
        lambda r: parse_page(r.json(), Queue.from_json),
        params=_params(name=name, pageNumber=page_number, pageSize=page_size),
        replay_safe=True,
    )


def get_queue(queue_id: str) -> Call[Queue]:
    return Call("GET", f"/api/queues/{_id(queue_id)}", _queue, replay_safe=True)


def create_queue(name: str, settings: Mapping[str, Any], *, paused: bool | None) -> Call[Queue]:
    """``POST /api/queues``: settings that are None are left out (their default is none).
    Not replay-safe: the name is taken by the first, so a repeat is a 409."""
    body: dict[str, Any] = {"name": name}
    body.update((key, value) for key, value in settings.items() if value is not None)
    if paused is not None:
        body["paused"] = paused
    return Call("POST", "/api/queues", _queue, body=body)


def update_queue(queue_id: str, settings: Mapping[str, Any]) -> Call[Queue]:
    """``PATCH /api/queues/{id}``: only the settings given, a null clearing one. Each sets a
    value outright, so sending it again does what sending it once did."""
    return Call(
        "PATCH", f"/api/queues/{_id(queue_id)}", _queue, body=dict(settings), replay_safe=True
    )


def queue_action(queue_id: str, action: str) -> Call[Queue]:
    """``pause`` or ``resume``: a state to be in, so safe to send again."""
    return Call("POST", f"/api/queues/{_id(queue_id)}/{action}", _queue, replay_safe=True)


def delete_queue(queue_id: str) -> Call[None]:
    """``DELETE /api/queues/{id}``: a 409 while the queue has unfinished jobs."""
    return Call("DELETE", f"/api/queues/{_id(queue_id)}", lambda r: None)
