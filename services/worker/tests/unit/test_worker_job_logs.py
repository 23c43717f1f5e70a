"""Job log lines: the job logger forwards rendered lines, the buffer takes them from any thread
without blocking, drops (and counts) what it cannot hold."""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from datetime import UTC, datetime

import pytest

from jobs_common.contracts import JobDispatch, JobLogLine
from jobs_sdk.context import JobLogger, render_line
from jobs_worker.adapters.job_log_shipper import (
    MAX_MESSAGE_CHARS,
    LogBuffer,
    level_name,
    line_forwarder,
    truncate,
)

pytestmark = pytest.mark.unit


def dispatch() -> JobDispatch:
    return JobDispatch(
        job_id=uuid.uuid4(),
        attempt=3,
        job_type="simulate",
        priority=2,
        payload={},
        timeout_seconds=10,
        dispatched_at=datetime.now(UTC),
    )


def job_logger(
    lines: list[tuple[int, str]], *, level: int = logging.INFO, forward_raises: bool = False
) -> JobLogger:
    def forward(levelno: int, text: str) -> None:
        if forward_raises:
            raise RuntimeError("sink broken")
        lines.append((levelno, text))

    return JobLogger(
        logging.getLogger("test.worker.joblogs"),
        {"job_id": "j"},
        forward=forward,
        forward_level=level,
    )


def test_logger_forwards_rendered_lines_at_or_above_its_level() -> None:
    lines: list[tuple[int, str]] = []
    logger = job_logger(lines)
    logger.debug("not shipped")
    logger.info("sleeping %.1f s", 1.25)
    logger.warning("rows: %d", 7, extra={"action": "x"})
    logger.error("failed")
    assert lines == [
        (logging.INFO, "sleeping 1.2 s"),
        (logging.WARNING, "rows: 7"),
        (logging.ERROR, "failed"),
    ]


def test_only_lines_at_the_local_level_reach_the_workers_own_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Routine handler lines go to the job's page only; warnings and errors are also in the
    worker's own log (WORKER_JOB_LOG_LOCAL_LEVEL, warning by default)."""
    lines: list[tuple[int, str]] = []
    logger = JobLogger(
        logging.getLogger("test.worker.joblogs"),
        {"job_id": "j"},
        forward=lambda level, text: lines.append((level, text)),
        forward_level=logging.INFO,
        local_level=logging.WARNING,
    )
    with caplog.at_level(logging.DEBUG, logger="test.worker.joblogs"):
        logger.info("resized")
        logger.warning("slow source")
    assert [text for _, text in lines] == ["resized", "slow source"]
    assert [record.getMessage() for record in caplog.records] == ["slow source"]


def test_the_worker_writes_handler_lines_locally_from_warning_by_default() -> None:
    from jobs_worker.settings import Settings

    assert Settings().job_log_local_level == "warning"


def test_a_broken_format_still_renders_a_line() -> None:
    assert render_line("bad %d", ("text",), None) == "bad %d ('text',)"
    assert render_line({"not": "a string"}, (), None) == "{'not': 'a string'}"


def test_a_shipped_line_names_the_exception_and_the_service_log_keeps_the_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lines: list[tuple[int, str]] = []
    logger = job_logger(lines, level=logging.DEBUG)
    with caplog.at_level(logging.DEBUG, logger="test.worker.joblogs"):
        try:
            open_missing("/srv/jobs/var/artifacts/9f/attempt-1.png")
        except FileNotFoundError:
            logger.exception("decode failed")
    ((level, text),) = lines
    assert level == logging.ERROR
    # What the job's owner reads: the class and the message, no traceback, no server path.
    assert text == (
        "decode failed\nFileNotFoundError: [Errno 2] No such file or directory: '…/attempt-1.png'"
    )
    # The worker's own log record still carries the exception, so its formatter prints the
    # traceback with the full path to stderr.
    (record,) = caplog.records
    assert record.exc_info is not None
    rendered = logging.Formatter().format(record)
    assert "Traceback (most recent call last)" in rendered
    assert "/srv/jobs/var/artifacts/9f/attempt-1.png" in rendered


def open_missing(path: str) -> None:
    with open(path, "rb"):
        pass


def test_an_exception_already_named_in_the_line_is_not_repeated() -> None:
    lines: list[tuple[int, str]] = []
    logger = job_logger(lines)
    error = KeyError("width")
    logger.warning("handler failed: %s: %s", "KeyError", "'width'", exc_info=error)
    assert lines == [(logging.WARNING, "handler failed: KeyError: 'width'")]


def test_a_failing_forward_never_reaches_the_handler() -> None:
    logger = job_logger([], forward_raises=True)
    logger.info("still fine")  # no exception


def test_levels_and_truncation() -> None:
    assert [level_name(n) for n in (5, 10, 20, 25, 30, 40, 50)] == [
        "debug",
        "debug",
        "info",
        "info",
        "warning",
        "error",
        "error",
    ]
    assert truncate("short") == "short"
    long = truncate("x" * 20_000)
    assert len(long) == MAX_MESSAGE_CHARS and long.endswith("[truncated]")


async def test_lines_from_the_loop_and_from_threads_reach_the_buffer() -> None:
    buffer = LogBuffer(capacity=100)
    buffer.open()
    source = dispatch()
    forward = line_forwarder(buffer, worker_id="w-1", dispatch=source)
    logger = JobLogger(logging.getLogger("test.worker.joblogs"), {}, forward=forward)

    logger.info("on the loop")
    threads: list[int] = []

    def in_thread() -> None:
        threads.append(threading.get_ident())
        logger.warning("from thread %d", 1)
        logger.info("x" * 9_000)

    await asyncio.to_thread(in_thread)
    assert threads and threads[0] != threading.get_ident()
    received: list[JobLogLine] = []
    async with asyncio.timeout(5):
        while len(received) < 3:
            received += await buffer.get_batch(10)
    buffer.done(len(received))
    assert [(line.level, line.message[:16]) for line in received] == [
        ("info", "on the loop"),
        ("warning", "from thread 1"),
        ("info", "x" * 16),
    ]
    assert len(received[2].message) == MAX_MESSAGE_CHARS
    for line in received:
        assert (line.job_id, line.attempt, line.worker_id) == (source.job_id, 3, "w-1")
        assert line.trace_id == source.trace_id
    assert buffer.dropped == 0
    async with asyncio.timeout(5):
        await buffer.join()


async def test_full_closed_or_unopened_buffer_drops_and_counts() -> None:
    source = dispatch()
    unopened = LogBuffer(capacity=10)
    line_forwarder(unopened, worker_id="w", dispatch=source)(logging.INFO, "lost")
    assert unopened.dropped == 1 and len(unopened) == 0

    buffer = LogBuffer(capacity=2)
    buffer.open()
    forward = line_forwarder(buffer, worker_id="w", dispatch=source)
    for n in range(5):
        forward(logging.INFO, f"line {n}")  # never blocks
    assert len(buffer) == 2 and buffer.dropped == 3

    buffer.close()
    forward(logging.INFO, "after close")
    # The thread's hand-off runs on the loop before the thread's completion does.
    await asyncio.to_thread(forward, logging.INFO, "after close, from a thread")
    assert buffer.dropped == 5
    assert [line.message for line in await buffer.get_batch(10)] == ["line 0", "line 1"]
    buffer.done(2)
    assert buffer.discard() == 0


async def test_a_batch_lingers_for_lines_that_follow_the_first() -> None:
    buffer = LogBuffer(capacity=10)
    buffer.open()
    forward = line_forwarder(buffer, worker_id="w", dispatch=dispatch())
    forward(logging.INFO, "first")
    asyncio.get_running_loop().call_later(0.01, forward, logging.INFO, "second")
    batch = await buffer.get_batch(10, linger=0.5)
    assert [line.message for line in batch] == ["first", "second"]

    forward(logging.INFO, "alone")
    assert [line.message for line in await buffer.get_batch(10)] == ["alone"]  # no linger
    buffer.done(3)


async def test_lines_a_results_message_took_during_the_linger_get_no_message_of_their_own() -> None:
    """The shipper waits for a line without taking it: a quick job's lines leave with its
    result (``take``), and the shipper's batch after the linger is empty."""
    buffer = LogBuffer(capacity=10)
    buffer.open()
    forward = line_forwarder(buffer, worker_id="w", dispatch=dispatch())
    forward(logging.INFO, "started")
    shipper_batch = asyncio.create_task(buffer.get_batch(10, linger=0.2))
    await asyncio.sleep(0.01)
    forward(logging.INFO, "finished")
    assert [line.message for line in buffer.take(10)] == ["started", "finished"]  # a result
    assert await shipper_batch == []
    forward(logging.INFO, "later")  # nothing takes this one: the shipper does, after the linger
    assert [line.message for line in await buffer.get_batch(10, linger=0.01)] == ["later"]
    buffer.done(1)
    async with asyncio.timeout(5):
        await buffer.join()
