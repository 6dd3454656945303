"""The fixes that issue 12 found unreal, rewritten: each keeps its feature working, is bounded, and needs
nothing the real system lacks. Minimal sequences, one per fix."""

import json

from sim.engine import Simulation
from sim.variant import Variant
from systems.nemsy import Message, Nemsy
from systems.nemsy.model import INDEX_FILE, load_wiki_context
from systems.nemsy.policies import EvictionSummarizer, FactAnswerer, IngestResponder, InsightRewriter
from systems.nemsy.state import (
    FIX_BOUNDED_INDEX,
    FIX_INVALIDATE_DERIVED,
    FIX_PARSER_REJECT_EMPTY,
    FIX_SAVE_EVICTED,
    FIX_UNIQUE_RESOLVE,
)


def make(*fixes: str, **kw) -> Nemsy:
    return Nemsy(
        Simulation(0),
        variant=Variant(fixes=frozenset(fixes)),
        responder=kw.pop("responder", IngestResponder()),
        answerer=FactAnswerer(),
        rewriter=InsightRewriter(),
        **kw,
    )


def tick(n: Nemsy) -> None:
    n.sim.env.run(until=n.sim.now + 1)


def test_summarize_evicted_is_a_bounded_model_call_over_the_evicted_text() -> None:
    """Evicted turns are folded into a summary by one model call; the summary keeps the user's statements
    (their text, not a list of fact ids) and never exceeds its bound."""
    n = make(FIX_SAVE_EVICTED, summarizer=EvictionSummarizer(max_chars=120))
    s = n.chat_session(max_turns=1)
    for t in range(8):
        s.say(f"Remember that the launch code word number {t} is kumquat-{t}.")
        tick(n)

    assert n.calls["summarize"] == 7 and len(s.history) == 2
    assert 0 < len(s.summary) <= 120 and "kumquat-6" in s.summary and "kumquat-0" not in s.summary
    chat = [r for r in n.sim.trace.data.requests if r.route == "wiki.chat"][-1]
    assert json.loads(chat.detail)["tokens_by_kind"]["memory"] > 0  # the summary reached the last turn


def test_invalidate_derived_tracks_every_loaded_page_and_insights() -> None:
    """An archived answer and an insight saved in chat stop loading once any page they were made from
    changes, cited or not."""
    n = make(FIX_INVALIDATE_DERIVED)
    n.write_source("a.md", "FACT-0001=amber")
    n.cli_ingest("a.md")
    tick(n)
    n._archive_query_result("What is x?", "no citation here", load_wiki_context(n, 30))
    s = n.chat_session()
    s.say("FACT-0001=amber, remember")
    insight = s.command("/save")
    tick(n)
    assert {"queries/What-is-x-2026-01-05.md", insight} <= set(load_wiki_context(n, 30).pages)

    n.write_source("a.md", "FACT-0001=teal")
    n.cli_ingest("a.md")
    assert set(load_wiki_context(n, 30).pages) == {"sources/a-2026-01-05.md"}


def test_shared_budget_loads_pages_first_and_the_newest_index_entries_in_what_is_left() -> None:
    """Pages that do not fit beside a half-budget index are no longer dropped: pages come first (newest
    first), the index gets what is left, one entry per page, newest first."""
    n = make(FIX_BOUNDED_INDEX, context_chars=300)
    for i in range(6):
        n.write_source(f"s{i}.md", f"FACT-{i + 1:04d}=amber " * 6)
        n.cli_ingest(f"s{i}.md")
        tick(n)
    ctx = load_wiki_context(n, 30)

    assert len(ctx.text) <= 300 and ctx.pages[0] == "sources/s5-2026-01-05.md"
    assert ctx.index_blocks is None or "[[s5-2026-01-05]]" in "".join(ctx.index_blocks)


def test_unique_resolve_prefers_the_exact_stem_and_lists_true_ambiguity() -> None:
    """``[[foo-d]]`` names ``foo-d`` exactly; among equal stems in two folders it answers "ambiguous"."""
    n = make(FIX_UNIQUE_RESOLVE)
    for p in ("insights/FOO-d.md", "sources/foo-d.md"):
        n.write_wiki_note(p, "x")
    assert n.resolve("foo-d").path == "sources/foo-d.md"
    assert n.resolve("FOO-d").path == "insights/FOO-d.md"
    n.write_wiki_note("queries/foo-d.md", "x")
    res = n.resolve("foo-d")
    assert res.path is None and len(res.candidates) == 3


def test_empty_summary_rejected_records_the_source_failed_not_done() -> None:
    """A rejected empty summary writes no page and leaves the source pending (``failed``), so the next
    scan retries it, instead of a ``done`` record with no page."""
    replies = iter(["---SUMMARY---\n\n", "---SUMMARY---\n# a\n\nFACT-0001=amber"])
    n = make(FIX_PARSER_REJECT_EMPTY, responder=lambda title, content, ctx: next(replies))
    n.write_source("a.md", "FACT-0001=amber")

    assert n.cli_ingest("a.md")[0].page is None
    rec = n.ledger_record("vault/origin-sources/a.md")
    assert rec is not None and rec.status == "failed" and n.list_wiki_notes() == ["log.md"]
    assert n.cli_ingest("a.md")[0].page == "sources/a-2026-01-05.md"
    assert n.read_wiki_note(INDEX_FILE) is not None


def test_insight_inputs_are_the_sessions_snapshot() -> None:
    """/save records the session's snapshot pages as the insight's derivation inputs."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.cli_ingest("a.md")
    s = n.chat_session()
    page = n.save_insight([Message("user", "x")], ctx=s.snapshot)
    assert page is not None and set(n.derivations[page]) == {"sources/a-2026-01-05.md"}
