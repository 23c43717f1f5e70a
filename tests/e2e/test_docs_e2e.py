"""The shell blocks a newcomer copies first (README.md, docs/getting-started.md) run as written
against the real stack: every ```sh block preceded by a `<!-- doc-test -->` comment, in order,
in one bash session per page (`set -euo pipefail`), with only the address changed from
`make dev`'s 127.0.0.1:3000 to this stack's gateway. `<!-- doc-test: expect "a" "b" -->` also
requires each string in that block's output."""

from __future__ import annotations

import asyncio
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", "docs/getting-started.md")
MARKED_BLOCK = re.compile(
    r"<!-- doc-test(?::(?P<options>[^>]*))? -->\s*\n```sh\n(?P<code>.*?)\n```", re.S
)
DEV_ADDRESSES = (
    "http://127.0.0.1:3000",
    "http://localhost:3000",
    "127.0.0.1:3000",
    "localhost:3000",
)


@dataclass
class Block:
    line: int
    code: str
    expect: list[str]


def marked_blocks(text: str) -> list[Block]:
    blocks = []
    for match in MARKED_BLOCK.finditer(text):
        options = shlex.split(match["options"] or "")
        expect = options[1:] if options[:1] == ["expect"] else []
        if options and options[0] != "expect":
            raise ValueError(f"unknown doc-test option {options[0]!r}")
        blocks.append(Block(text.count("\n", 0, match.start()) + 1, match["code"], expect))
    return blocks


def test_the_marker_finds_blocks_and_their_expectations() -> None:
    text = 'x\n<!-- doc-test: expect "ok" "two words" -->\n```sh\necho ok\n```\n```sh\nno\n```\n'
    (block,) = marked_blocks(text)
    assert (block.line, block.code, block.expect) == (2, "echo ok", ["ok", "two words"])


def at_gateway(code: str, gateway_url: str) -> str:
    address = gateway_url.removeprefix("http://")
    for dev in DEV_ADDRESSES:
        code = code.replace(dev, gateway_url if dev.startswith("http") else address)
    return code


@pytest.mark.parametrize("page", PAGES)
async def test_the_pages_shell_blocks_run_as_written(
    page: str, gateway_url: str, tmp_path: Path
) -> None:
    blocks = marked_blocks((ROOT / page).read_text())
    assert blocks, f"{page} has no block marked <!-- doc-test -->"
    script = ["set -euo pipefail"]
    for index, block in enumerate(blocks):
        script += [f"echo '@@block {index}@@'", at_gateway(block.code, gateway_url)]
    process = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        "\n".join(script),
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=200)
    text = output.decode()
    assert process.returncode == 0, f"{page}: the blocks failed:\n{text[-4000:]}"
    outputs = re.split(r"^@@block \d+@@$", text, flags=re.M)[1:]
    assert len(outputs) == len(blocks), text
    for block, out in zip(blocks, outputs, strict=True):
        for wanted in block.expect:
            assert wanted in out, f"{page}:{block.line}: no {wanted!r} in:\n{out}"
