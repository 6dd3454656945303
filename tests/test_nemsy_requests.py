"""Nemsy records its model requests through ``sim.trace.request`` (counting the index entry by entry, for
speed) instead of ``sim.request``: every recorded request must equal what ``sim.request`` records for the
same parts (exact cl100k tokens, fact ids, message count, nothing ``needed``), on every route."""

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import Simulation
from sim.text import fact_token
from sim.trace import RequestRecord
from systems.nemsy import Message, Nemsy
from systems.nemsy.model import INDEX_FILE, INDEX_HEAD
from systems.nemsy.policies import FactAnswerer, IngestResponder, InsightRewriter
from systems.nemsy.state import WikiContext


class Recording(Nemsy):
    """A Nemsy that also records each request through ``sim.request`` on a reference simulation."""

    def __init__(self, sim: Simulation) -> None:
        super().__init__(
            sim, responder=IngestResponder(), answerer=FactAnswerer(), rewriter=InsightRewriter()
        )
        self.reference = Simulation(0)
        self.pairs: list[tuple[RequestRecord, RequestRecord]] = []
        self.entrywise = 0

    def _request(self, command: str, route: str, parts: Sequence[str], ctx: WikiContext | None) -> int:
        index_text = dict(ctx.sections).get(INDEX_FILE) if ctx else None
        if (
            index_text is not None
            and len(self._entries) >= 3
            and index_text == INDEX_HEAD + self._entries_joined
        ):
            self.entrywise += 1
        tokens = super()._request(command, route, parts, ctx)
        self.pairs.append((self.sim.trace.data.requests[-1], self.reference.request("nemsy", route, parts)))
        return tokens


def _fields(rec: RequestRecord) -> tuple[object, ...]:
    return tuple(
        getattr(rec, k)
        for k in ("system", "route", "exact_tokens", "estimate", "fact_ids", "messages", "needed")
    )


def _tick(n: Nemsy) -> None:
    n.sim.env.run(until=n.sim.now + 1)


def _session(n: Nemsy, titles: Sequence[str]) -> None:
    for i, title in enumerate(titles):
        n.write_source(f"{title}.md", f"{title}: {fact_token(i + 1, 'amber')}")
        n.cli_ingest(f"{title}.md")
        _tick(n)
    n.query("What is FACT-0001?", archive=True)
    n.query(f"{titles[0]}） — FACT-0002?\n- [[x]]", archive=True)
    n.web_query("What is FACT-0002?")
    session = n.chat_session()
    session.say("Remember FACT-0099=teal.")
    session.command("/query What is FACT-0001? -a")
    session.command("/save topic")
    n.web_chat([Message("user", "hi"), Message("assistant", "ok")], "What is FACT-0003?")
    n.lint()
    n.save_insight([Message("user", "FACT-0004=ruby")], topic="t")
    _tick(n)


def test_every_route_records_what_sim_request_records() -> None:
    """Ingest, query (+archive), web query, chat (+/query, /save), web chat, lint and save: each recorded
    request equals ``sim.request`` over the same parts, and the entry-by-entry count was really used."""
    n = Recording(Simulation(0))
    _session(n, ["alpha", "beta", "C++ Notes", "测试", "gamma", "delta"])

    routes = {rec.route for rec, _ in n.pairs}
    assert routes >= {"wiki.ingest", "wiki.query", "wiki.chat", "wiki.web_chat", "wiki.lint", "wiki.save"}
    assert n.entrywise >= 10
    assert [_fields(mine) for mine, _ in n.pairs] == [_fields(ref) for _, ref in n.pairs]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.text(st.sampled_from([*"aZ09 -_?:#.\t测试）（—'s", "🙂"]), min_size=1, max_size=12).filter(
            lambda t: t.strip(" ?:#.\t（）—'") != ""
        ),
        min_size=3,
        max_size=6,
        unique_by=lambda t: t.strip(),
    )
)
def test_recorded_requests_equal_sim_request_for_drawn_titles(titles: list[str]) -> None:
    """For drawn source titles (odd characters included), every route's record equals ``sim.request``'s."""
    n = Recording(Simulation(0))
    _session(n, titles)

    assert [_fields(mine) for mine, _ in n.pairs] == [_fields(ref) for _, ref in n.pairs]
