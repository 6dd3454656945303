"""Nemsy's public pure functions against the exact examples of the fidelity note (§2.2–§2.4, §2.6, §2.8,
§2.13)."""

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies_nemsy import titles

from systems.nemsy import (
    LedgerRecord,
    cli_file_status,
    content_hash,
    display_file_status,
    index_entry,
    parse_ingest_response,
    resolve_citation,
    sanitize_title,
    select_wiki_pages,
)
from systems.nemsy.model import (
    EMPTY_HASH,
    frontmatter_dumps,
    index_stems,
    parse_ingest_response_strict,
    parse_ingest_response_with,
    summarize_token_log,
)
from systems.nemsy.state import (
    FIX_PARSER_ANY_FENCE,
    FIX_PARSER_ANY_LEVEL,
    FIX_PARSER_REJECT_EMPTY,
    FIX_PARSER_SECTION_ONLY,
)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("C++ Notes", "C-Notes"),
        ("C# Notes", "C-Notes"),
        ("C Notes", "C-Notes"),
        ("What is X?", "What-is-X"),
        ("What is X", "What-is-X"),
        ("a/b", "ab"),
        ("ab", "ab"),
        ("A: B", "A-B"),
        ("A B", "A-B"),
        ("x.md", "xmd"),
        ("a  b", "a--b"),
        ("a\tb", "ab"),
        ("../etc/passwd", "etcpasswd"),
        ("???", ""),
        ("  padded  ", "padded"),
        ("测试 摄取", "测试-摄取"),
        ("snake_case-dash", "snake_case-dash"),
    ],
)
def test_sanitize_title_examples(title: str, expected: str) -> None:
    """The note's collision examples: deletion, strip, then each space to a dash."""
    assert sanitize_title(title) == expected


@given(titles())
def test_sanitize_title_never_escapes(title: str) -> None:
    """A sanitized title has no path separator, dot or space, so the page path cannot escape."""
    out = sanitize_title(title)

    assert not set(out) & {"/", "\\", ".", " ", "\t", "\n"}
    assert sanitize_title(out) == out


def test_parser_missing_marker_returns_none() -> None:
    """No ``---SUMMARY---\\n``: None (nothing written)."""
    assert parse_ingest_response("SUMMARY:\nbody\n---QUESTIONS---\nq") is None


@pytest.mark.parametrize("marker", ["---SUMMARY---\r\n", "---SUMMARY--- \n"])
def test_parser_crlf_or_trailing_space_fails(marker: str) -> None:
    """CRLF or a trailing space after the marker also fails."""
    assert parse_ingest_response(marker + "body") is None


def test_parser_plain_summary_and_questions() -> None:
    """The summary is stripped; QUESTIONS are appended under the questions heading."""
    text = "preamble\n---SUMMARY---\n\n# T\n\nbody\n\n---QUESTIONS---\n- q1\n- q2\n\n"

    assert parse_ingest_response(text) == "# T\n\nbody\n\n---\n\n## 待探索问题\n\n- q1\n- q2"


def test_parser_no_questions_appends_nothing() -> None:
    """Without a QUESTIONS part the page is the summary alone (no trailing newline)."""
    assert parse_ingest_response("---SUMMARY---\n# T\nbody\n") == "# T\nbody"


def test_parser_lookahead_not_anchored() -> None:
    """The QUESTIONS lookahead is not anchored to a line start."""
    assert (
        parse_ingest_response("---SUMMARY---\nbody---QUESTIONS---\nq") == "body\n\n---\n\n## 待探索问题\n\nq"
    )


@pytest.mark.parametrize("info", ["", "markdown"])
def test_parser_unwraps_bare_and_markdown_fences(info: str) -> None:
    """A whole-summary fence with no info string or ``markdown`` is unwrapped."""
    text = f"---SUMMARY---\n```{info}\n# T\nbody\n```\n"

    assert parse_ingest_response(text) == "# T\nbody"


def test_parser_keeps_md_fence_verbatim() -> None:
    """```` ```md ```` is not unwrapped."""
    assert parse_ingest_response("---SUMMARY---\n```md\n# T\n```") == "```md\n# T\n```"


def test_parser_embedded_heading_cuts_everything_after() -> None:
    """An embedded questions heading loses every later section too."""
    text = "---SUMMARY---\n# T\n\nA\n\n## 待探索问题\n\n- x\n\n## 关系\n\nB\n---QUESTIONS---\nq"

    assert parse_ingest_response(text) == "# T\n\nA\n\n---\n\n## 待探索问题\n\nq"


def test_parser_ruled_embedded_heading_removed() -> None:
    """The ``---`` rule before the embedded heading goes with it."""
    assert parse_ingest_response("---SUMMARY---\nA\n\n---\n\n## 待探索问题\n\n- x") == "A"


def test_parser_h3_leaves_stray_hash() -> None:
    """``### 待探索问题`` leaves a trailing ``#``."""
    assert parse_ingest_response("---SUMMARY---\nA\n\n### 待探索问题\n\n- x") == "A\n\n#"


def test_parser_list_heading_kept() -> None:
    """``## 待探索问题列表`` has no word boundary after the heading text, so it is kept."""
    text = "A\n\n## 待探索问题列表\n\n- x"

    assert parse_ingest_response("---SUMMARY---\n" + text) == text


def test_parser_empty_summary_accepted() -> None:
    """An empty summary is accepted (an empty page is written)."""
    assert parse_ingest_response("---SUMMARY---\n\n---QUESTIONS---\n") == ""


def test_strict_parser_fixes_each_quirk() -> None:
    """The strict-parser fix: CRLF accepted, ```md unwrapped, only the questions section cut, empty
    rejected."""
    assert parse_ingest_response_strict("---SUMMARY---\r\nA") == "A"
    assert parse_ingest_response_strict("---SUMMARY---\n```md\nA\n```") == "A"
    embedded = "---SUMMARY---\nA\n\n### 待探索问题\n\n- x\n\n## B\n\nb"
    assert parse_ingest_response_strict(embedded) == "A\n\n## B\n\nb"
    assert parse_ingest_response_strict("---SUMMARY---\n\n---QUESTIONS---\nq") is None


def _upstream_parse(response: str) -> str | None:
    """A literal transcription of §2.3's regex sequence (the reference the model's parser must equal)."""
    m = re.search(r"---SUMMARY---\n(.*?)(?=---QUESTIONS---|$)", response, re.DOTALL)
    if not m:
        return None
    summary = m.group(1).strip()
    fence = re.match(r"^```(?:markdown)?\s*\n(.*?)\n```\s*$", summary, re.DOTALL)
    if fence:
        summary = fence.group(1).strip()
    summary = re.sub(r"\n{0,2}---\n\n## 待探索问题\b.*$", "", summary, flags=re.DOTALL).rstrip()
    summary = re.sub(r"\n{0,2}## 待探索问题\b.*$", "", summary, flags=re.DOTALL).rstrip()
    q = re.search(r"---QUESTIONS---\n(.*?)$", response, re.DOTALL)
    questions = q.group(1).strip() if q else ""
    if questions:
        summary = summary + "\n\n---\n\n## 待探索问题\n\n" + questions
    return summary


_PIECES = st.sampled_from(
    ["---SUMMARY---\n", "---QUESTIONS---\n", "## 待探索问题", "### 待探索问题", "## 待探索问题列表",
     "---\n\n", "```", "```markdown\n", "```md\n", "\n```", "\n", "\n\n", " ", "#", "A", "FACT-0001=amber",
     "\r\n"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_parser_equals_upstream_regex_sequence(response: str) -> None:
    """With no fix switched on, the parser is exactly upstream's regex sequence, on any reply."""
    assert parse_ingest_response(response) == _upstream_parse(response)


def test_section_only_fix_keeps_later_sections() -> None:
    """questions-section-only: the embedded section goes up to the next heading; later sections stay."""
    text = "---SUMMARY---\n# T\n\nA\n\n## 待探索问题\n\n- x\n\n## 关系\n\nB\n---QUESTIONS---\nq"

    assert parse_ingest_response_with(text, frozenset({FIX_PARSER_SECTION_ONLY})) == (
        "# T\n\nA\n\n## 关系\n\nB\n\n---\n\n## 待探索问题\n\nq"
    )


def test_any_level_fix_leaves_no_stray_hash() -> None:
    """questions-heading-any-level: ``### 待探索问题`` is removed whole (still cutting to the end)."""
    text = "---SUMMARY---\nA\n\n### 待探索问题\n\n- x\n\n## B\n\nb"

    assert parse_ingest_response_with(text, frozenset({FIX_PARSER_ANY_LEVEL})) == "A"


def test_any_fence_fix_unwraps_md() -> None:
    """any-fence-unwrapped: a ```` ```md ```` fence is unwrapped like a bare one."""
    assert (
        parse_ingest_response_with("---SUMMARY---\n```md\n# T\n```", frozenset({FIX_PARSER_ANY_FENCE}))
        == "# T"
    )


@pytest.mark.parametrize(
    ("summary", "expected"),
    [("", None), ("## 待探索问题\n\n- x", None), ("### 待探索问题\n\n- x", None), ("```md\n```", None),
     ("A", "A")],
)  # fmt: skip
def test_reject_empty_fix(summary: str, expected: str | None) -> None:
    """empty-summary-rejected: nothing but cuts, '#' or fence lines writes nothing; any text is kept."""
    assert (
        parse_ingest_response_with(f"---SUMMARY---\n{summary}\n", frozenset({FIX_PARSER_REJECT_EMPTY}))
        == expected
    )


def test_index_entry_format() -> None:
    """Em dash with spaces, one ASCII space, the date in full-width parentheses, a newline."""
    assert (
        index_entry("C-Notes-2026-01-05", "来自 C++ Notes 的摘要", "2026-01-05")
        == "- [[C-Notes-2026-01-05]] — 来自 C++ Notes 的摘要 （2026-01-05）\n"
    )


def test_index_stems_keep_duplicates() -> None:
    """Entry stems are read back in order, duplicates kept."""
    text = index_entry("a", "x", "d") + index_entry("b", "y", "d") + index_entry("a", "z", "d")

    assert index_stems(text) == ["a", "b", "a"]


def test_content_hash_strips_and_empty_constant() -> None:
    """sha256 of the stripped text; empty and whitespace-only give the e3b0c442… constant."""
    assert content_hash("") == EMPTY_HASH
    assert content_hash(" \n\t ") == EMPTY_HASH
    assert content_hash("  abc\n") == content_hash("abc")
    assert content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def _rec(content: str, *, at: str = "2026-01-05T00:00:10", status: str = "done") -> LedgerRecord:
    return LedgerRecord(
        hash=content_hash(content), size=len(content.encode()), status=status, ingested_at=(at,) if at else ()
    )


def test_cli_status_cases() -> None:
    """empty (blank), new (no record), done (hash matches), changed."""
    assert cli_file_status(None, " \n") == "empty"
    assert cli_file_status(None, "x") == "new"
    assert cli_file_status(_rec("x"), "x") == "done"
    assert cli_file_status(_rec("x"), "y") == "changed"


def test_cli_status_consequences() -> None:
    """An empty-status file that gains text is changed; whitespace-only edits stay done."""
    assert cli_file_status(_rec("", status="empty"), "text") == "changed"
    assert cli_file_status(_rec("text"), "\n  text  \n") == "done"


T0 = dt.datetime(2026, 1, 5, 0, 0, 10, tzinfo=dt.UTC).timestamp()


def test_display_status_cases() -> None:
    """empty (0 bytes), new (no record or no ingested_at), changed (mtime later), done."""
    assert display_file_status(None, 0, T0) == "empty"
    assert display_file_status(None, 5, T0) == "new"
    assert display_file_status(_rec("x", at=""), 5, T0) == "new"
    assert display_file_status(_rec("x"), 5, T0 + 1) == "changed"
    assert display_file_status(_rec("x"), 5, T0) == "done"
    assert display_file_status(_rec("x"), 5, T0 - 60) == "done"


def test_display_and_cli_status_disagree() -> None:
    """touch: display changed, CLI done; back-dated edit: display done, CLI changed; blank: new vs empty."""
    rec = _rec("x")

    assert (display_file_status(rec, 1, T0 + 5), cli_file_status(rec, "x")) == ("changed", "done")
    assert (display_file_status(rec, 1, T0 - 5), cli_file_status(rec, "y")) == ("done", "changed")
    assert (display_file_status(None, 3, T0), cli_file_status(None, "  \n")) == ("new", "empty")


def test_select_pages_filters_basenames_and_orders() -> None:
    """index.md/log.md by basename (sub/index.md too) are dropped; newest first; ties in path order."""
    files = [
        ("index.md", 9.0),
        ("log.md", 9.0),
        ("sub/index.md", 9.0),
        ("sources/b.md", 5.0),
        ("sources/a.md", 5.0),
        ("queries/q.md", 7.0),
        ("insights/i.md", 1.0),
        ("notes.txt", 9.0),
    ]

    assert select_wiki_pages(files, 30) == ["queries/q.md", "sources/a.md", "sources/b.md", "insights/i.md"]
    assert select_wiki_pages(files, 2) == ["queries/q.md", "sources/a.md"]
    assert select_wiki_pages(files, 0) == []


def test_select_pages_ties_use_component_order() -> None:
    """Ties follow Path order (component-wise), not plain string order: ``a/y.md`` before ``a-b/x.md``."""
    assert select_wiki_pages([("a-b/x.md", 1.0), ("a/y.md", 1.0)], 5) == ["a/y.md", "a-b/x.md"]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["sources/a.md", "sources/b.md", "queries/c.md", "d/index.md", "log.md", "x-y/z.md", "x/z.md"]
            ),
            st.integers(0, 3).map(float),
        ),
        unique_by=lambda t: t[0],
    ),
    st.integers(0, 8),
)
def test_select_pages_is_a_prefix_of_the_full_order(files, n) -> None:
    """Selecting N is the first N of selecting all (the loader's window is a prefix)."""
    assert select_wiki_pages(files, n) == select_wiki_pages(files, 100)[:n]


def test_resolve_citation_first_in_path_order() -> None:
    """``[[foo-d]]`` resolves to the insights page among equal lower-cased stems."""
    notes = ["sources/Foo-d.md", "queries/foo-d.md", "insights/FOO-d.md", "index.md", "log.md"]

    assert resolve_citation("foo-d", notes) == "insights/FOO-d.md"
    assert resolve_citation("FOO-D.md", notes) == "insights/FOO-d.md"
    assert resolve_citation("index", notes) == "index.md"
    assert resolve_citation("log", notes) == "log.md"


def test_resolve_citation_no_prefix_or_alias() -> None:
    """A path prefix or an alias is not stripped: 404 (None)."""
    notes = ["sources/X.md"]

    assert resolve_citation("sources/X", notes) is None
    assert resolve_citation("X|y", notes) is None
    assert resolve_citation("x", notes) == "sources/X.md"


def test_frontmatter_dumps_sorted_and_stripped() -> None:
    """Sorted YAML keys, a date string quoted, the formatted post stripped (no trailing newline)."""
    text = frontmatter_dumps(
        {"type": "query", "title": "What is X?", "tags": [], "date": "2026-01-05"}, "# What is X?\n\nanswer\n"
    )

    assert (
        text == "---\ndate: '2026-01-05'\ntags: []\ntitle: What is X?\ntype: query\n---\n\n"
        "# What is X?\n\nanswer"
    )


def test_token_log_summary() -> None:
    """Totals and per-command / per-model aggregates."""
    rows = [
        {"command": "ingest", "model": "m1", "prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        {"command": "query", "model": "m1", "prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        {"command": "ingest", "model": "m2", "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    ]

    assert summarize_token_log(rows) == {
        "total_calls": 3,
        "total_prompt_tokens": 16,
        "total_completion_tokens": 4,
        "total_tokens": 20,
        "by_command": {"ingest": {"calls": 2, "tokens": 14}, "query": {"calls": 1, "tokens": 6}},
        "by_model": {"m1": {"calls": 2, "tokens": 18}, "m2": {"calls": 1, "tokens": 2}},
    }
