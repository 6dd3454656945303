"""Nemsy records each model call with ``sim.request`` as parts labelled by kind: on every route the sum of
the parts' cl100k counts equals the exact count of the assembled system prompt, history and user prompt
(the parts are cut only where cl100k starts a new chunk), and the kinds account for every token."""

import json
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import Simulation
from sim.text import fact_token
from sim.tokens import count_tokens
from sim.trace import RequestRecord
from systems.nemsy import Message, Nemsy
from systems.nemsy.model import ModelCall
from systems.nemsy.policies import FactAnswerer, IngestResponder, InsightRewriter
from systems.nemsy.state import WikiContext


class Recording(Nemsy):
    """A Nemsy that keeps every call beside the request record it produced."""

    def __init__(self, sim: Simulation) -> None:
        super().__init__(
            sim, responder=IngestResponder(), answerer=FactAnswerer(), rewriter=InsightRewriter()
        )
        self.pairs: list[tuple[ModelCall, RequestRecord]] = []

    def _call(self, call: ModelCall, ctx: WikiContext | None) -> int:
        tokens = super()._call(call, ctx)
        self.pairs.append((call, self.sim.trace.data.requests[-1]))
        return tokens


def _tick(n: Nemsy) -> None:
    n.sim.env.run(until=n.sim.now + 1)


def _session(n: Nemsy, titles: Sequence[str], extra: int = 0) -> None:
    for i, title in enumerate(titles):
        n.write_source(f"{title}.md", f"{title}: {fact_token(i + 1, 'amber')}")
        n.cli_ingest(f"{title}.md")
        _tick(n)
    for i in range(extra):
        n._update_index(f"x{i}", f"sources/x{i}.md", f"来自 x{i} 的摘要")
    n.query("What is FACT-0001?", archive=True)
    n.query(f"{titles[0]}） — FACT-0002?\n- [[x]]", archive=True)
    n.query("What is FACT-0002?", reasoning=True)
    n.web_query("What is FACT-0002?")
    session = n.chat_session()
    session.say("Remember FACT-0099=teal.")
    session.command("/query What is FACT-0001? -a")
    session.command("/save topic")
    n.web_chat([Message("user", "hi"), Message("assistant", "ok")], "What is FACT-0003?")
    n.lint()
    n.web_lint()
    n.save_insight([Message("user", "FACT-0004=ruby")], topic="t")
    _tick(n)


def _exact(call: ModelCall) -> int:
    history = sum(count_tokens(m) for m in call.history)
    return count_tokens(call.system_text) + history + count_tokens(call.user_text)


def _check(n: Recording) -> None:
    for call, rec in n.pairs:
        assert rec.exact_tokens == _exact(call), (call.route, rec.exact_tokens, _exact(call))
        assert sum(json.loads(rec.detail)["tokens_by_kind"].values()) == rec.exact_tokens
        assert rec.estimate is None and rec.needed_ids == frozenset()


def test_every_route_records_exact_parts() -> None:
    """Ingest, query (+archive, reasoning), web query, chat (+/query, /save), web chat, lint, web lint and
    save: each record's tokens are the exact count of what upstream would send, split by kind."""
    n = Recording(Simulation(0))
    _session(n, ["alpha", "beta", "C++ Notes", "测试", "gamma", "delta"], extra=150)

    routes = {rec.route for _, rec in n.pairs}
    assert routes == {
        "wiki.ingest", "wiki.query", "wiki.reason", "wiki.web_query", "wiki.chat", "wiki.web_chat",
        "wiki.lint", "wiki.web_lint", "wiki.save",
    }  # fmt: skip
    kinds = {k for _, rec in n.pairs for k in json.loads(rec.detail)["tokens_by_kind"]}
    assert kinds == {"system", "message", "source", "index", "page", "memory"}
    assert max(len(call.parts()[0]) for call, _ in n.pairs) > 5  # the index really is cut into blocks
    _check(n)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.text(st.sampled_from([*"aZ09 -_?:#.\t测试）（—'s", "🙂", "\n"]), min_size=1, max_size=12).filter(
            lambda t: t.strip(" ?:#.\t（）—'\n") != ""
        ),
        min_size=3,
        max_size=6,
        unique_by=lambda t: t.strip(),
    ),
    st.integers(0, 140),
)
def test_recorded_requests_exact_for_drawn_titles(titles: list[str], extra: int) -> None:
    """For drawn source titles (odd characters included) and index sizes, every route's record is exact."""
    n = Recording(Simulation(0))
    _session(n, [t.replace("\n", " ").replace("/", "") for t in titles], extra)

    _check(n)
