"""Handler modules: what a worker loads, and the start-up errors that name module and cause."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jobs_worker.app.handler_loading import ENTRY_POINT_GROUP, HandlerLoadError, load_handlers
from jobs_worker.sdk import HandlerDefinitionError, handler

GOOD = """
from pydantic import BaseModel
from jobs_worker.sdk import handler, resource

class Reverse(BaseModel):
    text: str

class Reversed(BaseModel):
    reversed: str

@handler("acme.reverse", payload=Reverse, result=Reversed, timeout_seconds=30, slots=2)
async def reverse(ctx, payload):
    return {"reversed": payload.text[::-1]}

@handler("acme.shout", payload=Reverse, queue="cpu")
def shout(ctx, payload):
    return {"text": payload.text.upper()}

@resource("acme.client")
async def client():
    yield object()
"""


def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> str:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_module_s_handlers_and_resources_are_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = module(tmp_path, monkeypatch, "acme_good", GOOD)
    handlers = load_handlers([name], entry_point_group=None)
    reverse, shout = handlers.registry["acme.reverse"], handlers.registry["acme.shout"]
    assert (reverse.is_async, reverse.timeout_seconds, reverse.slots) == (True, 30, 2)
    assert reverse.result_model is not None and reverse.module == name
    assert (shout.is_async, shout.queue, shout.max_attempts) == (False, "cpu", 3)
    assert list(handlers.resources) == ["acme.client"]


def test_the_built_in_types_come_through_the_entry_points() -> None:
    registry = load_handlers([], entry_point_group=ENTRY_POINT_GROUP).registry
    assert {"email", "image_resize", "report_generation", "simulate"} <= set(registry)
    assert registry["image_resize"].is_async is False  # a sync handler, in the thread pool


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("import not_a_module_anywhere\n", "cannot import: ModuleNotFoundError"),
        ("x = 1\n", "defines no @handler function"),
        (
            "from jobs_worker.sdk import handler\n"
            "class Plain: pass\n"
            "@handler('acme.plain', payload=Plain)\n"
            "async def plain(ctx, payload): return {}\n",
            "payload= must be a pydantic model class",
        ),
        ("raise RuntimeError('no config')\n", "RuntimeError: no config"),
    ],
)
def test_a_bad_module_stops_the_worker_naming_module_and_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, says: str
) -> None:
    name = module(tmp_path, monkeypatch, f"acme_bad_{abs(hash(source))}", source)
    with pytest.raises(HandlerLoadError) as raised:
        load_handlers([name], entry_point_group=None)
    assert name in str(raised.value) and says in str(raised.value)


def test_two_handlers_for_one_type_stop_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = module(tmp_path, monkeypatch, "acme_one", GOOD)
    second = module(tmp_path, monkeypatch, "acme_two", GOOD.replace("acme.shout", "acme.other"))
    with pytest.raises(HandlerLoadError, match=r"two handlers for job type 'acme.reverse'"):
        load_handlers([first, second], entry_point_group=None)


def test_two_modules_claiming_one_resource_name_stop_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md, resources: a name is the worker's, so a second module's resource of the
    same name is refused (its handlers would have been handed the first one's); a module
    that imports another's resource shares it."""
    first = module(tmp_path, monkeypatch, "acme_res_one", GOOD)
    other_types = GOOD.replace("acme.reverse", "acme.r2").replace("acme.shout", "acme.s2")
    second = module(tmp_path, monkeypatch, "acme_res_two", other_types)
    with pytest.raises(HandlerLoadError, match=r"two resources named 'acme.client'"):
        load_handlers([first, second], entry_point_group=None)
    sharing = module(
        tmp_path,
        monkeypatch,
        "acme_res_sharing",
        """
        from pydantic import BaseModel
        from jobs_worker.sdk import handler
        from acme_res_one import client

        class Text(BaseModel):
            text: str

        @handler("acme.shared", payload=Text)
        async def shared(ctx, payload):
            return None
        """,
    )
    loaded = load_handlers([first, sharing], entry_point_group=None)
    assert list(loaded.resources) == ["acme.client"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"job_type": "Acme Reverse"},
        {"timeout_seconds": 0},
        {"max_attempts": 0},
        {"queue": "no spaces"},
        {"slots": 0},
    ],
)
def test_a_handler_definition_that_cannot_work_is_refused_where_it_is_written(
    arguments: dict[str, object],
) -> None:
    from pydantic import BaseModel

    class Payload(BaseModel):
        pass

    job_type = str(arguments.pop("job_type", "acme.ok"))
    with pytest.raises(HandlerDefinitionError):
        handler(job_type, payload=Payload, **arguments)  # type: ignore[arg-type]


def test_a_worker_consumes_its_handlers_queues_or_those_it_names_but_none_foreign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobs_worker.app.handler_loading import served_queues
    from jobs_worker.settings import Settings

    registry = load_handlers(
        [module(tmp_path, monkeypatch, "acme_q", GOOD)], entry_point_group=None
    )
    assert served_queues(Settings(), registry.registry) == ["cpu", "default"]
    assert served_queues(Settings(queues=["cpu"]), registry.registry) == ["cpu"]
    with pytest.raises(HandlerLoadError, match="WORKER_QUEUES names gpu"):
        served_queues(Settings(queues=["gpu"]), registry.registry)
