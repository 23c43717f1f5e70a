"""The typed usage in docs/client.md (and the package README, when it shows any) passes
``mypy --strict``, and the types are the ones promised: a handle's ``result()`` is the task's
result model, a chain's is its last step's, a wrong payload is refused. One mypy run (the
repository's configuration, pydantic's plugin) checks every snippet, so docs and types
cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

pytestmark = [pytest.mark.unit, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[4]
DOCS = (ROOT / "docs" / "client.md", ROOT / "clients" / "python" / "README.md")
SECTION = "## Typed tasks"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

# What the docs promise, said to mypy: assert_type fails the check when a type differs.
TYPES = """
from typing import Any, assert_type

from pydantic import BaseModel

from jobs_client import (
    AsyncBatchHandle,
    AsyncJobHandle,
    AsyncJobsClient,
    BatchHandle,
    Canvas,
    JobHandle,
    JobsClient,
    chain,
    chord,
    group,
    task,
)


class Reverse(BaseModel):
    text: str


class Reversed(BaseModel):
    reversed: str


class Count(BaseModel):
    words: int


reverse = task("acme.reverse", Reverse, Reversed)
count = task("acme.wordcount", Reverse, Count)
untyped = task("acme.reverse", Reverse)

with JobsClient() as jobs:
    handle = jobs.submit(reverse, Reverse(text="x"))
    assert_type(handle, JobHandle[Reversed])
    out = handle.result(timeout=60)
    assert_type(out, Reversed)
    print(out.reversed.upper())
    assert_type(jobs.submit("simulate", {"minSeconds": 0}).result(), Any)
    assert_type(jobs.submit(untyped, Reverse(text="x")).result(), Any)
    three = jobs.submit(chain(reverse.s(Reverse(text="a")), count.s(Reverse(text="b"))))
    assert_type(three, BatchHandle[Count])
    assert_type(three.result(), Count)
    piped = reverse.s(Reverse(text="a")) | count.s(Reverse(text="b"))
    assert_type(jobs.submit(piped), BatchHandle[Count])
    fan_in = group([reverse.s(Reverse(text="a"))]).then(count.s(Reverse(text="b")))
    assert_type(jobs.submit(fan_in).result(), Count)
    assert_type(jobs.submit(group([reverse.s(Reverse(text="a"))])).result(), list[Any])
    after = chord([reverse.s(Reverse(text="a"))], count.s(Reverse(text="b")))
    assert_type(after.then(reverse.s(Reverse(text="c"))), Canvas[Reversed])
    jobs.wait([handle, "a-job-id"])
    jobs.wait(three)


async def main() -> None:
    async with AsyncJobsClient() as jobs:
        handle = await jobs.submit(reverse, Reverse(text="x"))
        assert_type(handle, AsyncJobHandle[Reversed])
        assert_type(await handle.result(), Reversed)
        steps = await jobs.submit(chain(count.s(Reverse(text="a")), reverse.s(Reverse(text="b"))))
        assert_type(steps, AsyncBatchHandle[Reversed])
        assert_type(await steps.result(), Reversed)
"""

# What mypy must refuse: each line's error, by line of this snippet.
REFUSED = """
from pydantic import BaseModel

from jobs_client import JobsClient, task


class Reverse(BaseModel):
    text: str


class Reversed(BaseModel):
    reversed: str


reverse = task("acme.reverse", Reverse, Reversed)
with JobsClient() as jobs:
    jobs.submit(reverse, Reversed(reversed="x"))
    jobs.submit(reverse, {"text": "x"})
    jobs.submit(reverse, Reverse(text="x")).result().nope
    reverse.s(Reversed(reversed="x"))
"""
REFUSED_LINES = {17: "P", 18: "P", 19: "has no attribute", 20: "arg-type"}


def typed_usage() -> str:
    """The python blocks of the typed-usage sections, in order, as one module."""
    blocks = []
    for doc in DOCS:
        if not doc.is_file():
            continue
        for part in doc.read_text().split("\n## ")[1:]:
            if ("## " + part).startswith(SECTION):
                blocks += BLOCK.findall(part)
    return "\n".join(blocks)


def test_the_typed_usage_of_the_docs_and_the_promised_types_pass_mypy_strict(
    tmp_path: Path,
) -> None:
    docs = typed_usage()
    assert "task(" in docs and "chain(" in docs and "await handle.result" in docs, docs
    files = {"docs_typed.py": docs, "promised_types.py": TYPES, "refused.py": REFUSED}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out, err, _ = api.run(
        [
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--no-error-summary",
            *(str(tmp_path / name) for name in files),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert not err, err
    unexpected = [line for line in errors if "refused.py" not in line]
    assert unexpected == [], "\n".join(unexpected)
    refused = {int(line.split(":")[1]): line for line in errors if "refused.py" in line}
    assert sorted(refused) == sorted(REFUSED_LINES), "\n".join(errors)
    for number, expected in REFUSED_LINES.items():
        assert expected in refused[number], refused[number]
