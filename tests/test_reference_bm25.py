"""The ``bm25`` reference design: its rankings against rank-bm25 run directly on the same corpus, packing
within the budget with declared reasons, session granularity, a user's retriever, and the design-level
checks (adapter contract, report, coverage, bench, claims four ways, exhaustive scope)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from reference.bm25.model import SYSTEM_PROMPT, Bm25Memory, Settings
from reference.bm25.state import NEIGHBOURS
from reference.retrieval import BM25Index, tokenize
from sim.errors import UsageError
from sim.testing import check_claims, check_design, check_scope
from sim.tokens import count_tokens
from sim.variant import Variant

ROOT = Path(__file__).resolve().parents[1]
#: A small vocabulary, so words repeat across documents (idf near and below 0 occurs).
WORDS = ["cat", "Dog", "the", "a", "biscuit", "RAIN", "train", "FACT-0017=amber", "0017", "fish", "tea"]
docs_st = st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=14)
query_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@given(
    docs=docs_st,
    query=query_st,
    tokenizer=st.sampled_from(["words", "split"]),
    granularity=st.sampled_from(["turn", "session"]),
    sessions=st.lists(st.integers(0, 3), min_size=14, max_size=14),
)
def test_rankings_match_rank_bm25_run_directly(
    docs: list[str], query: str, tokenizer: str, granularity: str, sessions: list[int]
) -> None:
    """Identical scores (float equality) and order: hits are the documents (turns, or sessions: their
    turns joined by newlines) scoring above 0, by score descending, ties by position; the design's
    ranking lists them first, then the rest in order."""
    sids = [f"s{sessions[i]}" for i in range(len(docs))]
    mem = Bm25Memory(Settings(k=len(docs), tail=0, tokenizer=tokenizer, granularity=granularity))
    for i, d in enumerate(docs):
        mem.add(f"t{i}", sids[i], "user", "", d)
    mem.request(query, 10**9)
    if granularity == "turn":
        ids, texts = [f"t{i}" for i in range(len(docs))], docs
    else:
        ids = list(dict.fromkeys(sids))
        texts = ["\n".join(d for d, s in zip(docs, sids) if s == sid) for sid in ids]
    corpus = [tokenize(t, tokenizer) for t in texts]
    if any(corpus):
        direct = [float(s) for s in BM25Okapi(corpus).get_scores(tokenize(query, tokenizer))]
    else:
        direct = [0.0] * len(texts)
    assert BM25Index(texts, tokenizer=tokenizer).scores(query) == direct
    hits = sorted((i for i, s in enumerate(direct) if s > 0), key=lambda i: (-direct[i], i))
    rest = [i for i in range(len(texts)) if i not in set(hits)]
    assert mem.last_ranked == [ids[i] for i in hits + rest]


def test_packing_respects_the_budget_and_declares_reasons() -> None:
    mem = Bm25Memory(Settings(k=2, tail=1))
    texts = ["kitten food brand is Purrfect", "kitten vet is Dr Okafor", "kitten toy is a mouse",
             "rain all day", "train was late"]  # fmt: skip
    for i, t in enumerate(texts):
        mem.add(f"t{i}", "s0", "user", "", t)
    q = "which kitten vet?"
    fixed = count_tokens(SYSTEM_PROMPT) + count_tokens(q)
    # room for the tail turn and exactly one hit
    budget = fixed + count_tokens(texts[4]) + count_tokens(texts[1])
    parts = mem.request(q, budget)
    assert sum(count_tokens(p) for p in parts) <= budget
    assert parts[0] == SYSTEM_PROMPT and parts[-1] == q and parts[-2] == texts[4]
    assert texts[1] in parts  # rank 1: "kitten" and "vet"
    reasons = mem.last_reasons
    assert reasons["t1"] == "in-request" and reasons["t4"] == "in-request"
    assert reasons["t0"].startswith("cut-by-budget@rank 2") or reasons["t2"].startswith(
        "cut-by-budget@rank 2"
    )
    assert reasons["t3"] == "not-retrieved@no match"
    wide = Bm25Memory(Settings(k=1, tail=0))
    for i, t in enumerate(texts):
        wide.add(f"t{i}", "s0", "user", "", t)
    wide.request(q, 10**6)
    assert wide.last_reasons["t0"].startswith("not-retrieved@rank ") and wide.last_reasons["t0"].endswith(
        "> K 1"
    )


def test_session_granularity_ranks_sessions() -> None:
    mem = Bm25Memory(Settings(k=1, tail=0, granularity="session"))
    for s, lines in (("a", ["rain today", "and wind"]), ("b", ["my kitten is Biscuit", "lovely name"]),
                     ("c", ["train late", "again"])):  # fmt: skip
        for j, t in enumerate(lines):
            mem.add(f"{s}:{j}", s, "user", "", t)
    parts = mem.request("what is my kitten called?", 10**6)
    assert mem.last_ranked[0] == "b" and sorted(mem.last_ranked) == ["a", "b", "c"]
    assert "lovely name" in parts  # the whole session is packed


def test_neighbours_bring_the_reply_of_a_hit() -> None:
    for variant, expect in ((Variant(), False), (Variant(fixes=frozenset({NEIGHBOURS})), True)):
        mem = Bm25Memory(Settings(k=1, tail=0), variant=variant)
        for j, t in enumerate(["rain today", "train late", "what do I name my kitten", "Call her Biscuit."]):
            mem.add(f"s:{j}", "s", "user", "", t)
        assert ("Call her Biscuit." in mem.request("kitten name?", 10**6)) is expect


@pytest.fixture
def toy_retriever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "toy_retriever_mod.py").write_text(textwrap.dedent('''
        class Newest:
            """A toy retriever: every document is a hit, newest first (no BM25 at all)."""
            def __init__(self, documents):
                self.n = len(documents)
            def search(self, query):
                return [(i, float(i + 1)) for i in reversed(range(self.n))]

        class Broken:
            def __init__(self, documents):
                pass
            def search(self, query):
                return [(99, 1.0)]
    '''))  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toy_retriever_mod"
    sys.modules.pop("toy_retriever_mod", None)


def test_a_user_retriever_replaces_bm25(toy_retriever: str) -> None:
    from reference.bm25.adapter import Adapter as Bm25Adapter
    from reference.bm25.design import Knobs
    from reference.pager.adapter import Adapter as PagerAdapter
    from reference.pager.design import Knobs as PagerKnobs
    from sim.conversations.run import conversation_steps, drawn_for
    from sim.conversations.toy import tiny_instance
    from sim.engine import Simulation

    inst = tiny_instance()
    order = [t.turn_id for t in reversed(inst.turns)]
    for cls, knobs in ((Bm25Adapter, Knobs(retriever=f"{toy_retriever}:Newest", k=3, tail=0)),
                       (PagerAdapter, PagerKnobs(retriever=f"{toy_retriever}:Newest"))):  # fmt: skip
        a = cls(Simulation(0, keep_trace=False), 6000, drawn_for(inst), knobs=knobs)
        for step in conversation_steps(inst):
            a.step(step)
        assert a.ranking().ids == tuple(order)
    with pytest.raises(UsageError, match="cannot be loaded"):
        Bm25Adapter(Simulation(0), 6000, drawn_for(inst), knobs=Knobs(retriever="no_such_mod:x"))
    with pytest.raises(UsageError, match="unknown retriever"):
        Bm25Adapter(Simulation(0), 6000, drawn_for(inst), knobs=Knobs(retriever="nothing-registered"))
    a = Bm25Adapter(Simulation(0), 6000, drawn_for(inst), knobs=Knobs(retriever=f"{toy_retriever}:Broken"))
    with pytest.raises(UsageError, match="not one of the"):
        for step in conversation_steps(inst):
            a.step(step)


@pytest.mark.parametrize("design", ["bm25", "pager"])
def test_reference_designs_conform(design: str) -> None:
    assert check_design(design, ROOT) == []


@pytest.mark.parametrize("claim", ["bm25.unlike-phrasing", "pager.common-words"])
def test_claim_scopes_conform(claim: str) -> None:
    assert check_scope(claim) == []


@pytest.mark.parametrize("design", ["bm25", "pager"])
def test_claim_directions(design: str) -> None:
    assert check_claims(design) == []


def test_a_retriever_registered_as_an_entry_point_is_found(
    toy_retriever: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata as md

    from reference.retrieval import RETRIEVERS_GROUP, load_retriever, make_index

    ep = md.EntryPoint("newest", f"{toy_retriever}:Newest", RETRIEVERS_GROUP)
    real = md.entry_points
    monkeypatch.setattr(
        md, "entry_points", lambda **kw: [ep] if kw.get("group") == RETRIEVERS_GROUP else real(**kw)
    )
    assert load_retriever("newest") is not None and load_retriever("bm25") is None
    assert make_index("newest", ["a", "b", "c"]).search("q") == [(2, 3.0), (1, 2.0), (0, 1.0)]
