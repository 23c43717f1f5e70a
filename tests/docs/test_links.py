"""Every relative link of the README and docs/ reaches a file of the repository and, with an
anchor, a heading of that page (GitHub's slugs); no page sends the reader to a markdown file
the repository does not have (the design file, DESIGN.md, lives outside it)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .markdown_docs import (
    DOC_FILES,
    ROOT,
    anchors,
    link_problems,
    links,
    mentioned_file_problems,
    slug,
)

pytestmark = pytest.mark.unit


def read(path: Path) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", DOC_FILES, ids=str)
def test_relative_links_reach_a_file_and_a_heading(page: Path) -> None:
    assert link_problems(page, read(page)) == []


@pytest.mark.parametrize("page", DOC_FILES, ids=str)
def test_no_page_names_a_markdown_file_outside_the_repository(page: Path) -> None:
    assert mentioned_file_problems(page, read(page)) == []


def test_the_docs_have_links_to_check() -> None:
    # A parser that finds nothing would pass every page.
    assert sum(len(links(read(page))) for page in DOC_FILES) > 50


# GitHub's anchors.


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Abuse limits (429)", "abuse-limits-429"),
        ("Settings (environment, prefix `GATEWAY_`)", "settings-environment-prefix-gateway_"),
        ("Acknowledgements (`jobs_common.acks`)", "acknowledgements-jobs_commonacks"),
        ("GET /api/jobs/{jobId}", "get-apijobsjobid"),
        ("Restarts: when an attempt is lost", "restarts-when-an-attempt-is-lost"),
        ("1. Safe defaults and start-up checks", "1-safe-defaults-and-start-up-checks"),
        ("The web UI at `/` (`jobs_gateway.api.ui`)", "the-web-ui-at--jobs_gatewayapiui"),
        ("See [the SDK](sdk.md) *now*", "see-the-sdk-now"),
    ],
)
def test_slugs_follow_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_a_repeated_heading_gets_a_numbered_anchor_and_code_blocks_have_none() -> None:
    page = textwrap.dedent(
        """\
        # Metrics
        ## Metrics
        ## Metrics
        ```
        # Not a heading
        ```
        <a id="kept"></a>
        """
    )
    assert anchors(page) == {"metrics", "metrics-1", "metrics-2", "kept"}


# Each check fails on a broken doc.


def test_a_missing_file_a_missing_anchor_and_a_link_out_of_the_repository_are_reported(
    tmp_path: Path,
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Known part\n")
    (tmp_path / "docs" / "shot.png").write_bytes(b"\x89PNG")
    page = textwrap.dedent(
        """\
        # Page

        ## Here

        [fine](other.md#known-part), [fine](#here), ![fine](shot.png), [web](https://x.org/a.md#b)
        [from the root](/docs/other.md#other)
        [gone](missing.md), [wrong anchor](other.md#unknown-part), [own](#nowhere)
        [out](../../DESIGN.md)
        `[in code](missing.md)`

        ```
        [in a block](missing.md)
        ```

        [ref]: gone.md
        """
    )
    problems = link_problems(Path("docs/page.md"), page, {Path("docs/page.md"): page}, tmp_path)
    assert problems == [
        "docs/page.md:7: (missing.md) docs/missing.md does not exist",
        "docs/page.md:7: (other.md#unknown-part) no heading in docs/other.md has the anchor "
        "#unknown-part",
        "docs/page.md:7: (#nowhere) no heading in docs/page.md has the anchor #nowhere",
        "docs/page.md:8: (../../DESIGN.md) points outside the repository",
        "docs/page.md:15: (gone.md) docs/gone.md does not exist",
    ]


def test_a_mention_of_the_design_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "sdk.md").write_text("# SDK\n")
    (tmp_path / "README.md").write_text("# Readme\n")
    page = textwrap.dedent(
        """\
        The stand-in (nx-27017, see DESIGN.md section 9) stores datetimes as strings.
        See docs/sdk.md, sdk.md, [the README](../README.md), https://example.org/NOTES.md.
        Also `docs/gone.md`.
        """
    )
    problems = mentioned_file_problems(Path("docs/page.md"), page, tmp_path)
    assert [p.split(":", 2)[1:] for p in problems] == [
        [
            "1",
            " names DESIGN.md, which is not in the repository: point at the repository's own "
            "doc instead",
        ],
        [
            "3",
            " names docs/gone.md, which is not in the repository: point at the repository's "
            "own doc instead",
        ],
    ]
