"""A record skips what no formatter writes (the caller's place, the process, the thread), and
the lines carry what they did before."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import orjson
import pytest

from jobs_common.logging import DevFormatter, JsonFormatter, skip_unused_record_fields

pytestmark = pytest.mark.unit


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, list[logging.LogRecord]]]:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("t-logging-fields")
    logger.propagate = False
    logger.handlers[:] = [Keep()]
    logger.setLevel(logging.INFO)
    skip_unused_record_fields()
    yield logger, records
    logger.handlers.clear()


def test_records_skip_the_callers_place_the_process_and_the_thread(
    captured: tuple[logging.Logger, list[logging.LogRecord]],
) -> None:
    logger, records = captured
    logger.info("job started", extra={"job_id": "j-1", "attempt": 1})
    [record] = records
    assert record.funcName == "(unknown function)" and record.lineno == 0
    assert record.process is None and record.thread is None and record.processName is None


def test_both_formatters_write_the_same_lines_as_before(
    captured: tuple[logging.Logger, list[logging.LogRecord]],
) -> None:
    logger, records = captured
    logger.info("job %s", "started", extra={"job_id": "j-1", "attempt": 1})
    [record] = records
    assert DevFormatter().format(record) == "I t-logging-fields: job started job_id=j-1 attempt=1"
    entry = orjson.loads(JsonFormatter("worker").format(record))
    assert {k: v for k, v in entry.items() if k != "ts"} == {
        "level": "info",
        "service": "worker",
        "logger": "t-logging-fields",
        "message": "job started",
        "job_id": "j-1",
        "attempt": 1,
    }
