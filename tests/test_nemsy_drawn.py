"""Drawn-input tests of the Nemsy model: request parts count exactly, an ingest writes exactly the parsed
reply, drawn insight rewriters, and the disk and memory trees agree."""

from hypothesis import given, settings
from hypothesis import strategies as st
from nemsy_helpers import ingest_file, make, tick

from sim.engine import Simulation
from sim.text import extract_facts, fact_token
from sim.tokens import count_tokens
from systems.nemsy import Message, Nemsy, WikiContext, parse_ingest_response
from systems.nemsy.model import (
    LEDGER_PATH,
    QUERY_PAGES,
    RAW_DIR,
    index_stems,
    load_wiki_context,
)
from systems.nemsy.policies import responders, rewriters


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["source", "query", "insight"]),
            st.text(st.sampled_from([*"aZ09 -_?:#.\n\r\t测试）（—'s", "🙂"]), min_size=1, max_size=40),
        ),
        min_size=3,
        max_size=8,
    )
)
def test_request_parts_count_exactly(writes) -> None:
    """The sum of a request's part counts (index blocks, pages, template) equals the cl100k count of the
    assembled system and user prompts, for drawn index entries (odd characters, CR, newlines included)."""
    n = make()
    for kind, text in writes:
        if kind == "source":
            n._update_index(text, f"sources/{text}.md", f"来自 {text} 的摘要")
        elif kind == "query":
            n._update_index(text, "queries/q.md", f"查询结果：{text[:30]}...")
        else:
            n._update_index(text, "insights/i.md", f"对话洞见：{text[:30]}")
    n.write_wiki_note("sources/p.md", "page body）")
    for i in range(70):
        n._update_index(f"t{i}", f"sources/t{i}.md", "来自 t 的摘要")
    ctx = load_wiki_context(n, 3)
    for call in (n.query_call("what?", ctx), n.chat_call(ctx, [], "hi"), n.lint_call(ctx, web=True)):
        parts, kinds = call.parts()

        assert len(parts) == len(kinds) and "index" in kinds
        assert sum(count_tokens(p) for p in parts) == count_tokens(call.system_text) + count_tokens(
            call.user_text
        )


@settings(max_examples=40, deadline=None)
@given(responders(), st.lists(st.integers(1, 9999), max_size=4, unique=True))
def test_ingest_writes_exactly_the_parsed_reply(responder, numbers) -> None:
    """For any drawn responder: the page is parse(reply) (or absent), the log and the ledger always move."""
    replies: list[str] = []

    def capture(title: str, content: str, ctx: WikiContext) -> str:
        replies.append(responder(title, content, ctx))
        return replies[-1]

    n = make(responder=capture)
    text = "Source: " + " ".join(fact_token(i, "amber") for i in numbers)
    page = ingest_file(n, "a.md", text)

    expected = parse_ingest_response(replies[0])
    assert (page is None) == (expected is None)
    if page is not None:
        assert n.read_wiki_note(page) == expected
        assert extract_facts(expected) <= extract_facts(text)
    assert "ingest | a" in (n.read_wiki_note("log.md") or "")
    assert n.ledger_record(f"{RAW_DIR}/a.md").status == "done"


@settings(max_examples=30, deadline=None)
@given(rewriters(), st.sampled_from([None, "topic"]))
def test_save_insight_with_drawn_rewriters(rewriter, topic) -> None:
    """For any drawn rewriter: one insights/ page, one index entry, one save log entry."""
    n = make(rewriter=rewriter)
    page = n.save_insight([Message("user", "FACT-0001=amber"), Message("assistant", "ok")], topic=topic)

    assert page is not None and page.startswith("insights/")
    assert index_stems(n.read_wiki_note("index.md") or "") == [page[len("insights/") : -3]]
    assert "save | " in (n.read_wiki_note("log.md") or "")


def _session(n: Nemsy) -> tuple[str, str | None, str]:
    for i, rel in enumerate(["a.md", "d1/notes.md", "d2/notes.md"]):
        ingest_file(n, rel, f"{rel}: {fact_token(i + 1, 'amber')}")
    n.query("What is FACT-0001?", archive=True)
    tick(n)
    return load_wiki_context(n, QUERY_PAGES).text, n.read_wiki_note("log.md"), n.tree.read_text(LEDGER_PATH)


def test_disk_and_memory_backends_agree(tmp_path) -> None:
    """The same session on the in-memory tree and on disk gives the same context, log and ledger."""
    mem = _session(make(Simulation(4)))
    sim = Simulation(4, root=tmp_path)
    disk_nemsy = make(sim, tree=sim.tree("disk", agent="nemsy"))
    disk = _session(disk_nemsy)

    assert disk == mem
    assert (tmp_path / "vault" / "nemsy-wiki" / "index.md").exists()
    disk_nemsy.rescan()
    assert load_wiki_context(disk_nemsy, QUERY_PAGES).text == mem[0]
