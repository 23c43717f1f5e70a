"""docs/sdk.md, "Coming from Celery": its code blocks run as written, in order, in one
namespace (the handler module, then its callers against the eager client), so the mapping
from Celery cannot drift from the code."""

from __future__ import annotations

import re

import pytest

from .markdown_docs import ROOT

pytestmark = pytest.mark.unit

SECTION = "## Coming from Celery"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def guide_blocks(text: str) -> list[str]:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return _BLOCK.findall(text[start : end if end != -1 else None])


def test_the_celery_guide_runs_as_written() -> None:
    blocks = guide_blocks((ROOT / "docs" / "sdk.md").read_text())
    assert len(blocks) == 2  # the handler module, its callers
    namespace: dict[str, object] = {"__name__": "celery_guide"}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"docs/sdk.md (Coming from Celery, block {number})", "exec"), namespace)
    assert {"invoice", "notify", "crunch", "jobs"} <= set(namespace)


def test_a_guide_block_that_breaks_is_caught() -> None:
    text = f"{SECTION}\n\n```python\nassert 1 + 1 == 3\n```\n\n## Next\n\n```python\nx = 1\n```\n"
    [block] = guide_blocks(text)
    with pytest.raises(AssertionError):
        exec(compile(block, "guide", "exec"), {})
