"""The log context: bound fields reach every record through the handler's filter, a call
site's ``extra`` wins, a binding ends with its scope, concurrent tasks keep their own values,
and the shared HTTP middleware binds the request's ids."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from jobs_common import log_context
from jobs_common.log_context import LogContextFilter, bind, trace_id_from_headers
from jobs_common.logging import DevFormatter, JsonFormatter, configure_logging
from jobs_common.request_context import LogContextMiddleware

pytestmark = pytest.mark.unit


class Captured:
    def __init__(self) -> None:
        self.stream = io.StringIO()

    def lines(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.stream.getvalue().splitlines()]


@pytest.fixture
def captured() -> Iterator[Captured]:
    """A JSON handler with the filter on a logger of its own (the root is left alone)."""
    sink = Captured()
    handler = logging.StreamHandler(sink.stream)
    handler.setFormatter(JsonFormatter("test"))
    handler.addFilter(LogContextFilter())
    logger = logging.getLogger("test_log_context")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield sink
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


log = logging.getLogger("test_log_context")


def test_the_filter_adds_the_bound_fields(captured: Captured) -> None:
    with bind(trace_id="t-1", job_id="j-1", attempt=2, worker_id="w-1", request_id="r-1"):
        log.info("inside")
    (line,) = captured.lines()
    assert line["message"] == "inside"
    assert line["service"] == "test"
    assert {k: line[k] for k in log_context.FIELDS} == {
        "trace_id": "t-1",
        "job_id": "j-1",
        "attempt": 2,
        "worker_id": "w-1",
        "request_id": "r-1",
    }


def test_unbound_fields_are_left_out(captured: Captured) -> None:
    log.info("nothing bound")
    with bind(trace_id="t-2"):
        log.info("trace only")
    first, second = captured.lines()
    assert not set(log_context.FIELDS) & first.keys()
    assert second["trace_id"] == "t-2"
    assert not {"job_id", "attempt", "worker_id", "request_id"} & second.keys()


def test_call_site_extra_wins(captured: Captured) -> None:
    with bind(trace_id="bound", job_id="bound-job"):
        log.info("explicit", extra={"trace_id": "explicit", "action": "x"})
    (line,) = captured.lines()
    assert line["trace_id"] == "explicit"
    assert line["job_id"] == "bound-job"
    assert line["action"] == "x"


def test_binding_is_scoped_and_nested_bindings_restore(captured: Captured) -> None:
    with bind(trace_id="outer", job_id="j-outer"):
        with bind(trace_id="inner"):
            assert log_context.current() == {"trace_id": "inner", "job_id": "j-outer"}
            log.info("inner")
        log.info("outer")
    log.info("after")
    assert log_context.current() == {}
    inner, outer, after = captured.lines()
    assert (inner["trace_id"], inner["job_id"]) == ("inner", "j-outer")
    assert (outer["trace_id"], outer["job_id"]) == ("outer", "j-outer")
    assert "trace_id" not in after and "job_id" not in after


def test_binding_is_reset_when_the_scope_raises() -> None:
    with pytest.raises(RuntimeError), bind(trace_id="t"):
        raise RuntimeError("boom")
    assert log_context.current() == {}


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError, match="queue"), bind(queue="jobs.ready"):
        pass


async def test_concurrent_tasks_do_not_see_each_other(captured: Captured) -> None:
    both_bound = asyncio.Barrier(2)

    async def attempt(job_id: str) -> None:
        with bind(job_id=job_id, trace_id=f"trace-{job_id}"):
            await both_bound.wait()  # each binds before either logs
            log.info("running")
            await asyncio.sleep(0)
            # a task started inside the scope inherits it
            await asyncio.create_task(asyncio.to_thread(lambda: None))
            log.info("still running")

    await asyncio.gather(attempt("a"), attempt("b"))
    lines = captured.lines()
    assert len(lines) == 4
    assert all(line["trace_id"] == f"trace-{line['job_id']}" for line in lines)
    assert sorted(line["job_id"] for line in lines) == ["a", "a", "b", "b"]
    assert log_context.current() == {}


async def test_a_child_task_inherits_the_scope(captured: Captured) -> None:
    async def child() -> None:
        log.info("child")

    with bind(job_id="parent-job"):
        task = asyncio.create_task(child())
    await task
    assert captured.lines()[0]["job_id"] == "parent-job"


def test_configure_logging_installs_the_filter_and_both_formatters_show_fields() -> None:
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        configure_logging(service="svc", level="INFO", json=True)
        (handler,) = root.handlers
        assert any(isinstance(f, LogContextFilter) for f in handler.filters)
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", (), None)
        with bind(trace_id="t-9", attempt=3):
            assert handler.filter(record)
        entry = orjson.loads(JsonFormatter("svc").format(record))
        assert (entry["trace_id"], entry["attempt"], entry["service"]) == ("t-9", 3, "svc")
        assert {"ts", "level", "logger", "message"} <= entry.keys()
        assert "trace_id=t-9" in DevFormatter().format(record)
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([(b"x-trace-id", b"abc-123")], "abc-123"),
        (
            [(b"traceparent", b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")],
            "4bf92f3577b34da6a3ce929d0e0e4736",
        ),
        (
            [
                (b"traceparent", b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                (b"x-trace-id", b"explicit"),
            ],
            "explicit",
        ),
        ([(b"x-trace-id", b"has space")], None),
        ([(b"traceparent", b"00-" + b"0" * 32 + b"-00f067aa0ba902b7-01")], None),
        ([(b"traceparent", b"garbage")], None),
        ([], None),
    ],
)
def test_trace_id_from_headers(headers: list[tuple[bytes, bytes]], expected: str | None) -> None:
    assert trace_id_from_headers(headers) == expected


async def test_the_http_middleware_binds_request_and_trace_ids() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(log_context.current())

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        pass

    middleware = LogContextMiddleware(app)
    headers = [(b"x-request-id", b"req-1"), (b"x-trace-id", b"trace-1")]
    await middleware({"type": "http", "headers": headers}, receive, send)
    await middleware({"type": "http", "headers": [(b"x-request-id", b"bad id!")]}, receive, send)
    assert seen == [{"request_id": "req-1", "trace_id": "trace-1"}, {}]
    assert log_context.current() == {}
