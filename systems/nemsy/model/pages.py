"""Pure functions over page text: filenames, the ingest parser, index entries, frontmatter, citations.

Upstream: ``agent.py`` 254-318 (parser, filenames), 153-171 (index entry), ``vault.py`` 115-134
(frontmatter), ``web.py`` 237-250 (citation resolve); fidelity note §2.2-§2.4, §2.13.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import Any, cast, overload

import yaml

from sim.text import extract_facts
from systems.nemsy.model.constants import INDEX_FILE, LOG_FILE, QUESTIONS_HEADING
from systems.nemsy.state import (
    FIX_PARSER_ANY_FENCE,
    FIX_PARSER_ANY_LEVEL,
    FIX_PARSER_REJECT_EMPTY,
    FIX_PARSER_SECTION_ONLY,
    FIX_STRICT_PARSER,
)

# -- regexes (fidelity note §2.2, §2.3, §2.10) ----------------------------------------------------------
_UNSAFE = re.compile(r"[^\w\u4e00-\u9fff\-_ ]")
_SUMMARY = re.compile(r"---SUMMARY---\n(.*?)(?=---QUESTIONS---|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:markdown)?\s*\n(.*?)\n```\s*$", re.DOTALL)
_QUESTIONS = re.compile(r"---QUESTIONS---\n(.*?)$", re.DOTALL)
TITLE_LINE = re.compile(r"^title:\s*(.+)$", re.MULTILINE)
# The embedded-questions patterns (upstream: r"\n{0,2}---\n\n## 待探索问题\b.*$", then the same without the
# rule) are assembled in _cut_embedded, which the parser fixes vary. The parser fixes' own patterns:
_FENCE_ANY = re.compile(r"^```[\w-]*\s*\n(.*?)\n```\s*$", re.DOTALL)
_FENCE_LINE = re.compile(r"^```.*$", re.MULTILINE)
_SUMMARY_TOLERANT = re.compile(r"---SUMMARY---[ \t]*\n(.*?)(?=---QUESTIONS---|$)", re.DOTALL)
_QUESTIONS_TOLERANT = re.compile(r"---QUESTIONS---[ \t]*\n(.*?)$", re.DOTALL)
_ENTRY_STEM = re.compile(r"^- \[\[(.*?)\]\] — ", re.MULTILINE)


def sanitize_title(title: str) -> str:
    """Upstream's inline filename rule: delete ``[^\\w\\u4e00-\\u9fff\\-_ ]``, strip, spaces to ``-``.

    ``"C++ Notes"`` and ``"C# Notes"`` both give ``"C-Notes"``; ``"a  b"`` gives ``"a--b"``; ``"???"``
    gives ``""``.
    """
    return _UNSAFE.sub("", title).strip().replace(" ", "-")


def unwrap_fence(text: str, pattern: re.Pattern[str] = _FENCE) -> str:
    """The body of a whole-text ``` fence (bare or ``markdown``; *pattern* widens it), else *text*."""
    m = pattern.match(text)
    return m.group(1).strip() if m else text


def parse_ingest_response(response: str) -> str | None:
    """The page body ``_parse_and_write_ingest`` would write for *response*, or None (nothing written).

    Requires ``---SUMMARY---\\n`` (CRLF or a trailing space fails); unwraps a bare or ``markdown`` fence
    only; cuts everything from an embedded ``## 待探索问题`` heading on; appends the ``---QUESTIONS---``
    part under that heading. An empty summary is accepted.
    """
    return parse_ingest_response_with(response)


def _cut_embedded(summary: str, ruled: bool, level: str, section_only: bool) -> str:
    """Remove an embedded questions heading (upstream: it and everything after it, then rstrip)."""
    pattern = r"\n{0,2}" + (r"---\n\n" if ruled else "") + level + r" 待探索问题\b"
    m = re.search(pattern, summary)
    if m is None:
        return summary.rstrip()
    head = summary[: m.start()].rstrip()
    if not section_only:
        return head
    nxt = re.search(r"\n#{1,6} ", summary[m.end() :])
    if nxt is None:
        return head
    tail = summary[m.end() + nxt.start() :].strip("\n")
    return (head + "\n\n" + tail if head else tail).rstrip()


def parse_ingest_response_with(response: str, fixes: frozenset[str] = frozenset()) -> str | None:
    """:func:`parse_ingest_response` with some of the parser fixes switched on (each one quirk of §2.3):

    - ``questions-section-only``: an embedded questions heading removes only its own section (up to the
      next heading), not every later section;
    - ``questions-heading-any-level``: the embedded heading is matched at any level ``#{2,}``, so
      ``### 待探索问题`` leaves no stray ``#``;
    - ``any-fence-unwrapped``: a fence with any info string (```` ```md ````) is unwrapped;
    - ``empty-summary-rejected``: a summary with no text after the cuts (fence lines, rules and ``#`` do
      not count) writes nothing;
    - ``strict-parser``: all four, plus a CRLF-tolerant marker.

    With no fixes this is upstream's regex sequence exactly (the ``re.sub`` calls of §2.3 remove from the
    first match to the end, which :func:`_cut_embedded` does with a search and a slice).
    """
    strict = FIX_STRICT_PARSER in fixes
    section_only = strict or FIX_PARSER_SECTION_ONLY in fixes
    level = r"#{2,}" if strict or FIX_PARSER_ANY_LEVEL in fixes else "##"
    fence = _FENCE_ANY if strict or FIX_PARSER_ANY_FENCE in fixes else _FENCE
    reject_empty = strict or FIX_PARSER_REJECT_EMPTY in fixes
    text = response.replace("\r\n", "\n") if strict else response
    m = (_SUMMARY_TOLERANT if strict else _SUMMARY).search(text)
    if m is None:
        return None
    summary = unwrap_fence(m.group(1).strip(), fence)
    summary = _cut_embedded(summary, True, level, section_only)
    summary = _cut_embedded(summary, False, level, section_only)
    if reject_empty and not re.search(r"\w", _FENCE_LINE.sub("", summary)):
        return None
    q = (_QUESTIONS_TOLERANT if strict else _QUESTIONS).search(text)
    questions = q.group(1).strip() if q else ""
    if questions:
        summary = summary + "\n\n---\n\n" + QUESTIONS_HEADING + "\n\n" + questions
    return summary


def parse_ingest_response_strict(response: str) -> str | None:
    """The strict-parser fix: every parser fix of :func:`parse_ingest_response_with` and a CRLF-tolerant
    marker."""
    return parse_ingest_response_with(response, frozenset({FIX_STRICT_PARSER}))


def index_entry(stem: str, summary_line: str, day: str) -> str:
    """One ``index.md`` line: ``- [[stem]] — summary （YYYY-MM-DD）\\n`` (U+2014, full-width parentheses)."""
    return f"- [[{stem}]] — {summary_line} （{day}）\n"


def index_stems(index_text: str) -> list[str]:
    """The ``[[stem]]`` of every index entry, in file order (duplicates kept)."""
    return _ENTRY_STEM.findall(index_text)


def without_entries(index_text: str, stems: set[str]) -> str:
    """*index_text* without the entries of *stems*."""
    lines = index_text.splitlines(keepends=True)
    keep = [ln for ln in lines if not any(ln.startswith(f"- [[{s}]] — ") for s in stems)]
    return "".join(keep)


#: Index lines per block (a request's index parts; the vault's in-memory index).
INDEX_BLOCK_LINES = 64


def index_blocks(index_text: str) -> tuple[str, ...]:
    """*index_text* as blocks of :data:`INDEX_BLOCK_LINES` lines (the last one partial; never empty)."""
    lines = index_text.splitlines(keepends=True)
    n = INDEX_BLOCK_LINES
    return tuple("".join(lines[i : i + n]) for i in range(0, len(lines), n)) or ("",)


def extend_blocks(blocks: Sequence[str], text: str) -> tuple[str, ...]:
    """The blocks of ``"".join(blocks) + text``, re-cutting only the last block (which starts a line); the
    blocks before the new last one are held packed (:class:`PackedBlocks`)."""
    if not blocks:
        return index_blocks(text)
    new = index_blocks(blocks[-1] + text)
    items = blocks._items[:-1] if isinstance(blocks, PackedBlocks) else tuple(blocks[:-1])
    packed = PackedBlocks(
        (*items, *(zlib.compress(b.encode("utf-8", "surrogatepass"), 1) for b in new[:-1]), new[-1])
    )
    return cast("tuple[str, ...]", packed)


class PackedBlocks(Sequence[str]):
    """Index blocks as a tuple of them reads, the blocks that will not change again held as compressed UTF-8
    (issue 42: a long Wiki's index was held as text, about 200 bytes a line; a request reads its leading
    blocks' totals, not their text, so a block is unpacked only when read)."""

    __slots__ = ("_items",)

    def __init__(self, items: tuple[str | bytes, ...]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return cast("tuple[str, ...]", PackedBlocks(self._items[i]))
        return _unpack(self._items[i])

    def __iter__(self) -> Iterator[str]:
        return map(_unpack, self._items)

    def __add__(self, other: Sequence[str]) -> tuple[str, ...]:
        more = other._items if isinstance(other, PackedBlocks) else tuple(other)
        return cast("tuple[str, ...]", PackedBlocks((*self._items, *more)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PackedBlocks, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PackedBlocks({tuple(self)!r})"


def _unpack(item: str | bytes) -> str:
    return item if isinstance(item, str) else zlib.decompress(item).decode("utf-8", "surrogatepass")


def path_key(path: str) -> tuple[str, ...]:
    """The sort key of ``sorted(Path...)``: component-wise code-point order."""
    return tuple(path.split("/"))


def loadable(path: str) -> bool:
    """Whether the loader may load *path*: a ``*.md`` whose basename is not ``index.md``/``log.md``."""
    base = path.rsplit("/", 1)[-1]
    return path.endswith(".md") and base not in (INDEX_FILE, LOG_FILE)


def select_wiki_pages(paths_with_mtimes: Iterable[tuple[str, float]], max_files: int) -> list[str]:
    """The loader's page choice: ``*.md`` whose basename is not ``index.md``/``log.md``, newest mtime first,
    ties in path order, the first *max_files*."""
    ordered = sorted((p for p in paths_with_mtimes if loadable(p[0])), key=lambda p: path_key(p[0]))
    ordered.sort(key=lambda p: p[1], reverse=True)
    return [p for p, _ in ordered[: max(0, max_files)]]


def resolve_citation(title: str, note_paths: Iterable[str]) -> str | None:
    """``GET /api/wiki/resolve``: the first note (in path order) whose lower-cased stem equals
    ``title.lower().removesuffix(".md")``, else None (404)."""
    target = title.lower().removesuffix(".md")
    for p in sorted(note_paths, key=path_key):
        if PurePosixPath(p).stem.lower() == target:
            return p
    return None


def resolve_candidates(title: str, note_paths: Iterable[str]) -> tuple[str, ...]:
    """Every note whose lower-cased stem matches *title* (path order)."""
    target = title.lower().removesuffix(".md")
    return tuple(p for p in sorted(note_paths, key=path_key) if PurePosixPath(p).stem.lower() == target)


#: python-frontmatter's YAML handler dumps and loads with libyaml's safe classes when PyYAML has them.
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FM_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)


def frontmatter_dumps(metadata: dict[str, Any], content: str) -> str:
    """``frontmatter.dumps(frontmatter.Post(content, **metadata))`` (``vault.py`` 132-133): PyYAML's safe
    dump (block style, Unicode kept, keys sorted, width 80, so long titles fold and a title with a tab,
    CR or newline is double-quoted), stripped, between ``---`` lines, a blank line, the content; the whole
    text stripped. Empty metadata still writes ``---\\n{}\\n---``.
    """
    meta = yaml.dump(metadata, Dumper=_DUMPER, default_flow_style=False, allow_unicode=True).strip()
    return f"---\n{meta}\n---\n\n{content}\n".strip()


def frontmatter_metadata(text: str) -> dict[str, Any]:
    """``frontmatter.loads(text).metadata`` with the YAML handler: a text (stripped) that starts with a
    ``---`` line is split at its first two ``---`` lines and the part between them is loaded with PyYAML's
    safe loader; no frontmatter, or only one ``---`` line, gives ``{}``, and a non-dict YAML value is
    ignored. Raises what PyYAML raises on malformed YAML.

    Not modeled: python-frontmatter's JSON and TOML handlers (a page that opens with a ``{`` or ``+++`` line).
    """
    text = text.strip()
    if not _FM_BOUNDARY.match(text):
        return {}
    pieces = _FM_BOUNDARY.split(text, 2)
    if len(pieces) != 3:
        return {}
    data = yaml.load(pieces[1], Loader=_LOADER)
    return dict(data) if isinstance(data, dict) else {}


def short_hash(text: str, n: int = 8) -> str:
    """The first *n* hex characters of sha256(*text*) (the injective-names fix's suffix)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def facts_in(text: str) -> frozenset[str]:
    """The fact ids in *text* (re-exported for checkers)."""
    return extract_facts(text)
