"""Nemsy's pure checkers on hand-written histories (Maelstrom style: empty, holding, violating), and the
claims' pinned counterexamples (faithful fails, fixed holds)."""

import pytest

from sim.claims import COMBINED, FAITHFUL, FIXED, OFF, registry
from systems.nemsy import properties as pr
from systems.nemsy.model import index_entry
from systems.nemsy.state import Resolution

IDX = index_entry("a-d", "x", "d") + index_entry("b-d", "y", "d")


def test_relevant_page_checker() -> None:
    """Holds when nothing holds the fact or it was loaded; fails when only an unloaded page has it."""
    pages = {"sources/a.md": "FACT-0001=amber", "sources/b.md": "FACT-0002=teal"}

    assert pr.check_relevant_page_loaded({}, {}, "FACT-0001", 1).holds
    a, b = ({p: pages[p]} for p in ("sources/a.md", "sources/b.md"))
    assert pr.check_relevant_page_loaded(a, pages, "FACT-0001", 1).holds
    assert pr.check_relevant_page_loaded({}, pages, "FACT-0001", 0).holds
    assert not pr.check_relevant_page_loaded(b, pages, "FACT-0001", 1).holds


def test_index_resolution_checker() -> None:
    """Every entry needs a page."""
    assert pr.check_index_entries_resolve(None, []).holds
    assert pr.check_index_entries_resolve(IDX, ["sources/a-d.md", "queries/b-d.md"]).holds
    assert "b-d" in pr.check_index_entries_resolve(IDX, ["sources/a-d.md"]).detail


def test_done_records_checker() -> None:
    """done needs an existing page written from the recorded hash; empty records are exempt."""
    ledger = {
        "version": 2,
        "files": {
            "/s/a.md": {"status": "done", "wiki_page": "sources/a.md", "hash": "h1"},
            "/s/e.md": {"status": "empty", "wiki_page": None, "hash": "e"},
        },
    }

    assert pr.check_done_records_have_pages({"files": {}}, []).holds
    assert pr.check_done_records_have_pages(ledger, ["sources/a.md"], {"sources/a.md": "h1"}).holds
    assert not pr.check_done_records_have_pages(ledger, []).holds
    assert not pr.check_done_records_have_pages(ledger, ["sources/a.md"], {"sources/a.md": "h0"}).holds


def test_unique_entries_and_one_page_checkers() -> None:
    """Duplicate stems and several dated pages of one source are violations."""
    assert pr.check_unique_index_entries(IDX).holds
    assert not pr.check_unique_index_entries(IDX + index_entry("a-d", "z", "d")).holds
    assert pr.check_one_page_per_source(["sources/a-d1.md"], {"a": "a"}).holds
    assert not pr.check_one_page_per_source(["sources/a-d1.md", "sources/a-d2.md"], {"a": "a"}).holds


def test_distinct_pages_checker() -> None:
    """Two sources on one page, a missing page or a doubled entry are violations."""
    one = {"files": {"/a": {"wiki_page": "sources/a-d.md"}, "/b": {"wiki_page": "sources/b-d.md"}}}
    shared = {"files": {"/a": {"wiki_page": "sources/a-d.md"}, "/b": {"wiki_page": "sources/a-d.md"}}}

    assert pr.check_distinct_sources_distinct_pages(one, ["sources/a-d.md", "sources/b-d.md"], IDX).holds
    assert not pr.check_distinct_sources_distinct_pages(shared, ["sources/a-d.md"], IDX).holds
    assert not pr.check_distinct_sources_distinct_pages(one, ["sources/a-d.md"], IDX).holds


def test_small_checkers() -> None:
    """Budget, supported answers, snapshot freshness, request facts, status agreement, reingest, flags."""
    assert pr.check_context_within("x" * 10, 10).holds and not pr.check_context_within("x" * 11, 10).holds
    src = {"sources/a.md": "FACT-0001=teal"}
    assert pr.check_answer_supported("暂无", "FACT-0001", {}).holds
    assert pr.check_answer_supported("FACT-0001=teal", "FACT-0001", src).holds
    assert not pr.check_answer_supported("FACT-0001=amber", "FACT-0001", src).holds
    assert pr.check_snapshot_fresh("a", "a").holds and not pr.check_snapshot_fresh("a", "b").holds
    assert pr.check_request_has_facts({"FACT-0001"}, ["FACT-0001"]).holds
    assert not pr.check_request_has_facts(set(), ["FACT-0001"]).holds
    assert pr.check_status_agree({"a": ("done", "done")}).holds
    assert not pr.check_status_agree({"a": ("done", "changed")}).holds
    assert pr.check_no_spurious_reingest(2, 2, 2).holds and not pr.check_no_spurious_reingest(2, 4, 2).holds
    assert pr.check_flags_honored(True, True, 0).holds and not pr.check_flags_honored(False, True, 0).holds


def test_parsed_page_checker() -> None:
    """Lost facts, stray '#', fence lines and accepted empty summaries are violations."""
    assert pr.check_parsed_page(None, [], True).holds
    assert not pr.check_parsed_page("", [], True).holds
    assert pr.check_parsed_page("FACT-0001=a", ["FACT-0001"], False).holds
    assert not pr.check_parsed_page("x", ["FACT-0001"], False).holds
    assert not pr.check_parsed_page("FACT-0001=a\n\n#", ["FACT-0001"], False).holds
    assert not pr.check_parsed_page("```md\nFACT-0001=a\n```", ["FACT-0001"], False).holds


def test_resolution_and_archive_checkers() -> None:
    """An ambiguous resolution with a path fails; a complete archive holds."""
    assert pr.check_unambiguous_resolution(Resolution("a", ("a",))).holds
    assert pr.check_unambiguous_resolution(Resolution(None, ("a", "b"))).holds
    assert not pr.check_unambiguous_resolution(Resolution("a", ("a", "b"))).holds
    assert pr.check_archive_effects("queries/q.md", "\n[x] query | q — 归档：是\n", 1, "q").holds
    assert not pr.check_archive_effects(None, None, 0, "q", "AttributeError").holds


PINNED = {
    "nemsy.cache-question-first": {"steps": 20, "chars": 200},
    "nemsy.recency-window": {"sources": 2, "probe": 0, "max_files": 1},
    "nemsy.delete-leaves-index": {"sources": 1, "delete": 0},
    "nemsy.duplicate-index-on-reingest": [["ingest", 0], ["edit", 0], ["ingest", 0]],
    "nemsy.title-collision": ["C++ Notes.md", "C# Notes.md"],
    "nemsy.ledger-done-without-page": [["ingest", 0, "none"], ["edit", 0], ["ingest", 0, "crlf"]],
    "nemsy.unbounded-index": {"ops": ["ingest"] * 8 + ["archive"] * 2, "max_files": 0, "budget": 400},
    "nemsy.derived-feedback": {
        "sources": 1,
        "archive": True,
        "edit": "drop",
        "reingest": True,
        "next_day": False,
    },
    "nemsy.stale-chat-snapshot": [["ingest", 0], ["turn", 0]],
    "nemsy.trimming-loses-history": {"max_turns": 1, "turns": 2},
    "nemsy.status-split-touch": [["ingest"], ["touch"]],
    "nemsy.status-split-backdated": [["ingest"], ["backdate"]],
    "nemsy.status-split-blank": [["write", "blank"]],
    "nemsy.corrupt-ledger-reset": {"sources": 2, "corrupt": '{"version": 1, "files": {}}'},
    "nemsy.parser-lost-sections": {
        "sections": ["##", "##"],
        "embedded": "## bare",
        "at": 1,
        "fence": "none",
        "questions": True,
    },
    "nemsy.parser-stray-hash": {
        "sections": ["##"],
        "embedded": "### bare",
        "at": 1,
        "fence": "none",
        "questions": False,
    },
    "nemsy.parser-md-fence": {
        "sections": ["##"],
        "embedded": None,
        "at": 0,
        "fence": "md",
        "questions": False,
    },
    "nemsy.parser-empty-summary": {
        "sections": [],
        "embedded": "### ruled",
        "at": 0,
        "fence": "none",
        "questions": True,
    },
    "nemsy.ambiguous-citation": {
        "pages": [["sources", "Foo-d"], ["queries", "foo-d"], ["insights", "FOO-d"]],
        "cite": "foo-d",
    },
    "nemsy.web-ignores-flags": [["query", True]],
    "nemsy.reasoning-archive-crash": {"reasoning": True, "question": "alpha"},
}


@pytest.mark.parametrize("claim_id", sorted(PINNED))
def test_pinned_counterexample(claim_id: str) -> None:
    """The note's minimal sequence fails on the faithful design and holds on the fixed variant."""
    claim = registry("nemsy")[claim_id]
    example = PINNED[claim_id]

    assert not claim.run(example, FAITHFUL).holds
    assert claim.run(example, FIXED).holds


#: For each claim, an example its off switch (the mechanism switched off or emptied) must fail: the
#: property asserts the mechanism's service, not only the absence of the failure (issue 12).
PINNED_OFF = {
    "nemsy.cache-question-first": {"steps": 2, "chars": 200},
    "nemsy.recency-window": {"sources": 2, "probe": 0, "max_files": 1},
    "nemsy.delete-leaves-index": {"sources": 1, "delete": 0},
    "nemsy.duplicate-index-on-reingest": [["ingest", 0]],
    "nemsy.title-collision": ["d1/notes.md"],
    "nemsy.ledger-done-without-page": [["ingest", 0, "none"]],
    "nemsy.unbounded-index": {"ops": ["ingest"], "max_files": 0, "budget": 400},
    "nemsy.derived-feedback": {
        "sources": 1,
        "archive": True,
        "edit": "none",
        "reingest": False,
        "next_day": False,
    },
    "nemsy.stale-chat-snapshot": [["ingest", 0], ["turn", 0]],
    "nemsy.trimming-loses-history": {"max_turns": 1, "turns": 2},
    "nemsy.status-split-touch": [["ingest"]],
    "nemsy.status-split-backdated": [["ingest"]],
    "nemsy.status-split-blank": [["write", "blank"]],
    "nemsy.corrupt-ledger-reset": {"sources": 1, "corrupt": None},
    "nemsy.parser-lost-sections": {
        "sections": ["##"],
        "embedded": None,
        "at": 0,
        "fence": "none",
        "questions": False,
    },
    "nemsy.parser-stray-hash": {
        "sections": ["##"],
        "embedded": None,
        "at": 0,
        "fence": "none",
        "questions": False,
    },
    "nemsy.parser-md-fence": {
        "sections": ["##"],
        "embedded": None,
        "at": 0,
        "fence": "none",
        "questions": False,
    },
    "nemsy.parser-empty-summary": {
        "sections": ["##"],
        "embedded": None,
        "at": 0,
        "fence": "none",
        "questions": False,
    },
    "nemsy.ambiguous-citation": {"pages": [["sources", "foo-d"]], "cite": "foo-d"},
    "nemsy.web-ignores-flags": [["ingest", True]],
    "nemsy.reasoning-archive-crash": {"reasoning": False, "question": "alpha"},
}


@pytest.mark.parametrize("claim_id", sorted(PINNED_OFF))
def test_pinned_off_switch_is_rejected(claim_id: str) -> None:
    """On a minimal example the claim's off switch fails the property while the fix and every fix
    together hold it: the property tells a fix from "switch the feature off"."""
    claim = registry("nemsy")[claim_id]
    example = PINNED_OFF[claim_id]

    assert not claim.run(example, OFF).holds
    assert claim.run(example, FIXED).holds
    assert claim.run(example, COMBINED).holds


def test_every_claim_is_pinned() -> None:
    """Each registered Nemsy claim has a pinned example here, for its faithful and its off direction."""
    assert sorted(registry("nemsy")) == sorted(PINNED) == sorted(PINNED_OFF)
