"""Reading the repository's markdown the way GitHub renders it: headings and their anchors,
relative links, tables, and names that look like environment variables.

Each checker takes a page's text and returns its problems, one line each naming the place, so
the tests can feed it a broken snippet as easily as the real docs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]

# The docs these tests keep true: the README and every page under docs/.
DOC_FILES = (Path("README.md"), *sorted(p.relative_to(ROOT) for p in (ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target), an optional "title" after the target.
_INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # the text: brackets nest one level
    r"\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
# [label]: target (a reference definition).
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line outside fenced code blocks."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                continue
            yield number, line
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            fence = None


# Headings and anchors.


def heading_text(markdown: str) -> str:
    """A heading's text as GitHub renders it: code spans, links and emphasis markers gone."""
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("*", "")


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger): lower case, every character but
    letters, digits, ``_``, ``-`` and spaces dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading_text(text).strip().lower()).replace(" ", "-")


def headings(text: str) -> list[tuple[int, int, str]]:
    """``(line number, level, text)`` of every ATX heading outside code blocks."""
    found = []
    for number, line in prose_lines(text):
        match = _ATX_HEADING.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def anchors(text: str) -> set[str]:
    """Every anchor a page has: heading slugs (a repeated one gets ``-1``, ``-2``...) and
    explicit ``<a id=...>`` / ``<a name=...>``."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, _, heading in headings(text):
        base = slug(heading)
        candidate = base
        while candidate in found:
            seen[base] = seen.get(base, 0) + 1
            candidate = f"{base}-{seen[base]}"
        found.add(candidate)
    found.update(_HTML_ANCHOR.findall(text))
    return found


def section(text: str, title_prefix: str) -> str:
    """The lines under the first heading starting with ``title_prefix`` (case-sensitive), up to
    the next heading of the same or a higher level; empty when no such heading exists."""
    lines = text.splitlines()
    found = [(n, level) for n, level, title in headings(text) if title.startswith(title_prefix)]
    if not found:
        return ""
    start, level = found[0]
    end = len(lines)
    for number, other_level, _ in headings(text):
        if number > start and other_level <= level:
            end = number - 1
            break
    return "\n".join(lines[start:end])


# Links.


@dataclass(frozen=True)
class Link:
    line: int
    target: str


def links(text: str) -> list[Link]:
    """Every link and image target outside code (inline ``[t](x)`` and reference definitions)."""
    found: list[Link] = []
    for number, line in prose_lines(text):
        without_code = _CODE_SPAN.sub("", line)
        found.extend(Link(number, m.group(1)) for m in _INLINE_LINK.finditer(without_code))
        definition = _REFERENCE_DEFINITION.match(without_code)
        if definition:
            found.append(Link(number, definition.group(1)))
    return found


def link_problems(
    path: Path, text: str, read: Mapping[Path, str] | None = None, root: Path = ROOT
) -> list[str]:
    """Relative links of ``path`` (relative to ``root``) whose file or anchor does not exist.

    ``read`` gives the text of pages by path (relative to ``root``) instead of the disk: the
    tests use it to check snippets."""

    def page(target: Path) -> str | None:
        if read is not None and target in read:
            return read[target]
        file = root / target
        return file.read_text(encoding="utf-8") if file.is_file() else None

    problems = []
    for link in links(text):
        if not link.target or _SCHEME.match(link.target):
            continue  # http(s), mailto...: not checked here
        file_part, _, anchor = link.target.partition("#")
        where = f"{path}:{link.line}: ({link.target})"
        if file_part:
            base = Path() if file_part.startswith("/") else path.parent  # / : the repository
            resolved = Path(_normalise(base / unquote(file_part).lstrip("/")))
            if resolved.parts and resolved.parts[0] == "..":
                problems.append(f"{where} points outside the repository")
                continue
            if not (root / resolved).exists() and (read is None or resolved not in read):
                problems.append(f"{where} {resolved} does not exist")
                continue
        else:
            resolved = path
        if anchor and resolved.suffix == ".md":
            target_text = page(resolved)
            if target_text is None:
                problems.append(f"{where} {resolved} is not a file")
            elif unquote(anchor) not in anchors(target_text):
                problems.append(f"{where} no heading in {resolved} has the anchor #{anchor}")
    return problems


def _normalise(path: Path) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            else:
                parts.append(part)
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or "."


def mentioned_file_problems(path: Path, text: str, root: Path = ROOT) -> list[str]:
    """Markdown files a page names in its text (``docs/gateway.md``, ``sdk.md``, a link's
    target too) that are in the repository neither beside the page nor from its root. The
    design file the project was built from (DESIGN.md) is the one this has caught: it lives
    outside the repository, so a reader of the docs has no way to open it."""
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = _URL.sub("", line)
        for match in _MARKDOWN_FILE.finditer(line):
            name = unquote(match.group(1))
            candidates = [root / _normalise(path.parent / name), root / name.lstrip("/")]
            if name.startswith("/") or not any(c.is_file() for c in candidates):
                problems.append(
                    f"{path}:{number}: names {name}, which is not in the repository: "
                    "point at the repository's own doc instead"
                )
    return problems


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")
_MARKDOWN_FILE = re.compile(r"(?<![\w.%-])((?:\.{0,2}/)?(?:[\w.%-]+/)*[\w.%-]+\.md)(?![\w-])")


# Tables and environment variable names.


@dataclass(frozen=True)
class Table:
    line: int
    header: list[str]
    rows: list[tuple[int, list[str]]]


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def tables(text: str) -> list[Table]:
    """Every table outside code blocks: its header's cells and its rows' (line number, cells);
    cells are stripped, ``\\|`` stays inside its cell."""
    found: list[Table] = []
    previous = -2
    for number, line in prose_lines(text):
        if not line.strip().startswith("|"):
            continue
        cells = _cells(line)
        if number != previous + 1:
            found.append(Table(number, cells, []))
        elif not all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            found[-1].rows.append((number, cells))
        previous = number
    return found


def code_spans(cell: str) -> list[str]:
    return [m.group(2).strip() for m in _CODE_SPAN.finditer(cell)]


def names_in_cell(cell: str, prefix: str = "") -> list[str]:
    """The variable names a settings table's first cell gives, in full.

    A cell names one variable or several (`` `A_B` / `A_C` ``, `` `A_B`, `A_C` ``); a later
    name may be shortened to its last words (`` `WORKER_SMTP_HOST` / `_PORT` ``,
    `` `..._RETRY_MAX_SECONDS` ``), which replace as many words of the name before it.
    ``prefix``: the table's names leave it out (a header like ``setting (`SCHEDULER_`)``)."""
    names: list[str] = []
    for span in code_spans(cell):
        token = re.sub(r"\s*\(.*\)$", "", span)  # `MAX_ATTEMPTS_BY_TYPE (JSON)`
        short = token.removeprefix("...")
        if short.startswith("_") and names:
            words = short.strip("_").split("_")
            base = names[-1].split("_")
            names.append("_".join(base[: len(base) - len(words)] + words))
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*", token):
            names.append(prefix + token if prefix and not token.startswith(prefix) else token)
    return names


def table_prefix(header_cell: str, prefixes: Iterable[str]) -> str:
    """The prefix a table's header declares for its names (``setting (`SCHEDULER_`)``)."""
    for span in code_spans(header_cell):
        if span in prefixes:
            return span
    return ""


def settings_table_names(text: str, prefix: str) -> set[str]:
    """Names in the first column of the tables of ``text`` that belong to ``prefix``: full
    names (`` `GATEWAY_PORT` ``), or names a header's `` `PREFIX_` `` lets leave it out."""
    names: set[str] = set()
    for table in tables(text):
        shortened = table_prefix(table.header[0], (prefix,))
        for _, cells in table.rows:
            found = names_in_cell(cells[0], shortened)
            names.update(name for name in found if name.startswith(prefix))
    return names


def env_like_names(text: str, prefixes: Iterable[str]) -> list[tuple[int, str]]:
    """``(line number, name)`` of every word that looks like a variable of one of the
    prefixes (``GATEWAY_JWT_SECRET``), code blocks included. A name may be a pattern of a
    family (``SCHEDULER_RETRY_*``, ``SCHEDULER_RETENTION_*_DAYS``)."""
    alternatives = "|".join(re.escape(p) for p in prefixes)
    pattern = re.compile(rf"(?<![\w*])(?:{alternatives})[A-Z0-9_*]+(?![\w*])")
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        found.extend((number, m.group(0)) for m in pattern.finditer(line))
    return found
