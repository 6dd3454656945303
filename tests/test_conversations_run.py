"""The conversation benchmark's runner, metrics, baselines and outputs on small instances built in code
(issue 28). CLI-level tests need the loaders (sim.conversations.formats) and skip without them."""

from __future__ import annotations

import csv
import dataclasses
import json
import sqlite3

import pytest
from conversation_helpers import make_instance

from sim.bench.tasks import DesignSpec, parse_designs
from sim.conversations import run as conv
from sim.conversations.baselines import BASELINES
from sim.conversations.metrics import GENERIC_REASON, QUESTION_COLUMNS, Scorer, aggregate, present
from sim.conversations.window import OVER_WINDOW
from sim.engine import Simulation
from sim.workload import ModelRequest, StorageStats, WorkStep

DESIGNS = ("merchantbench", "nemsy", "rsiagent", "tracecraft")


@pytest.fixture(scope="module")
def instance():
    return make_instance(0, sessions=10, turns=8, words=80, questions=3)


@pytest.fixture(scope="module")
def design_rows(instance):
    return {d: conv.run_instance(instance, parse_designs(d)[0], (3000, 24000)) for d in DESIGNS}


def test_each_design_end_to_end(instance, design_rows):
    for d, rows in design_rows.items():
        assert len(rows) == 2 * len(instance.questions), d
        assert [r["budget"] for r in rows] == [3000] * 3 + [24000] * 3
        for r in rows:
            assert set(QUESTION_COLUMNS) <= set(r)
            assert r["request_tokens"] > 0
            assert 0 <= r["evidence_in_context"] <= r["evidence_turns"] == 2
            assert r["over_window"] == int(r["request_tokens"] > r["budget"])


def test_every_lost_turn_has_a_design_reason(design_rows):
    lost = 0
    for d, rows in design_rows.items():
        for r in rows:
            pairs = json.loads(r["lost"])
            assert len(pairs) == r["evidence_turns"] - r["evidence_in_context"]
            for tid, why in pairs:
                lost += 1
                assert why and why != GENERIC_REASON, (d, tid, why)
    assert lost > 0  # the small window loses turns in every design, so the reasons were exercised


def test_reason_codes_name_the_mechanism(design_rows):
    codes = {d: {why.split("@")[0].split("+")[0] for r in rows for _t, why in json.loads(r["lost"])}
             for d, rows in design_rows.items()}  # fmt: skip
    # A request over the window delivers nothing (issue 38): its turns are lost as request-over-window.
    assert codes["merchantbench"] <= {
        "trimmed-from-suffix",
        "compacted-not-saved",
        "compacted-saved-not-read",
        OVER_WINDOW,
    }
    nemsy = {"clipped-from-page", "page-outside-recency-window", "never-ingested", OVER_WINDOW}
    assert codes["nemsy"] <= nemsy
    assert codes["rsiagent"] <= {"folded-out-of-worklog", "elided-in-fold-input", OVER_WINDOW}
    assert codes["tracecraft"] <= {"never-saved", "memory-key-not-read-back", OVER_WINDOW}


def test_oracle_recall_is_one_where_it_fits(instance):
    rows = conv.run_instance(instance, DesignSpec("oracle", "oracle"), (500, 100_000))
    fits = [r for r in rows if not r["over_window"]]
    assert fits and all(r["evidence_in_context"] == r["evidence_turns"] for r in fits)
    assert all(r["sessions_in_context"] == r["evidence_sessions"] for r in rows)
    full = conv.run_instance(instance, DesignSpec("full", "full"), (3000,))
    assert all(r["over_window"] for r in full)  # the whole haystack is over a small window: counted as over
    agg = {
        a["design"]: a for a in aggregate(rows + full) if a["question_type"] == "all" and a["budget"] != 500
    }
    assert agg["oracle"]["evidence_recall_turn"] == 1.0


def test_baselines_read_labels_and_differ(instance):
    q = instance.questions[0]
    sizes = [conv.run_baseline(instance, b, (10_000,))[0]["request_tokens"] for b in BASELINES]
    assert sizes[0] < sizes[1] < sizes[2]  # oracle < oracle-sessions < full
    assert q.evidence


def _requests(instance, label, budget=3000):
    sim = Simulation(0, keep_trace=False)
    adapter = conv.build_adapter(parse_designs(label)[0], sim, budget, conv.drawn_for(instance))
    out = [(s, adapter.step(s).parts) for s in conv.conversation_steps(instance)]
    sim.close()
    return out


def test_labels_cannot_reach_a_design():
    """Permuted evidence labels and answers give the same steps and requests: no policy reads them."""
    instance = make_instance(1, sessions=8, turns=6, words=64, questions=2)
    turns = [t.turn_id for t in instance.turns]
    permuted = dataclasses.replace(
        instance,
        questions=tuple(
            dataclasses.replace(q, evidence=tuple(reversed(turns[: 5 + k])), answer=f"other answer {k}")
            for k, q in enumerate(instance.questions)
        ),
    )
    assert list(conv.conversation_steps(instance)) == list(conv.conversation_steps(permuted))
    for d in DESIGNS:
        assert _requests(instance, d) == _requests(permuted, d), d
    steps = [s for s, _ in _requests(instance, "rsiagent")]
    fields = {f.name for f in dataclasses.fields(WorkStep)}
    assert not fields & {"evidence", "answer", "has_answer", "is_evidence"}
    assert all(not s.facts for s in steps)


def test_steps_keep_text_roles_sessions_and_question_position(instance):
    steps = list(conv.conversation_steps(instance))
    turns = [s for s in steps if s.turn_id is not None]
    assert [s.observation for s in turns] == [t.text for t in instance.turns]
    assert [s.role for s in turns] == [t.role for t in instance.turns]
    assert sum(s.new_session for s in turns) == len(instance.sessions)
    qs = [s for s in steps if s.question_id is not None]
    assert [s.question for s in qs] == [q.question for q in instance.questions]
    assert steps[-len(qs) :] == qs  # after every turn (after_turn == len(turns))


def test_questions_do_not_change_a_built_in_designs_memory():
    """Asking the same question twice gives the same request (a question leaves no trace in memory)."""
    instance = make_instance(2, sessions=8, turns=6, words=64)
    q = next(s for s in conv.conversation_steps(instance) if s.question_id is not None)
    for d in DESIGNS:
        sim = Simulation(0, keep_trace=False)
        adapter = conv.build_adapter(parse_designs(d)[0], sim, 3000, conv.drawn_for(instance))
        for s in conv.conversation_steps(instance):
            if s.turn_id is not None:
                adapter.step(s)
        first = adapter.step(q).parts
        assert adapter.step(q).parts == first, d
        sim.close()


@pytest.mark.parametrize("spec", ["merchantbench", "merchantbench:fixed", "merchantbench:fix=aligned-trim"])
def test_a_request_a_design_counted_is_the_count_of_its_parts(spec):
    """MerchantBench's question request carries its own exact count (the history's per-message counts,
    summed), so the runner does not count those texts again: it is the parts' count, and the faithful
    trim's request does carry it (the fixed variants' trims may leave it to the runner)."""
    from sim.conversations.metrics import request_tokens

    instance = make_instance(3, sessions=8, turns=6, words=64, questions=2)
    carried = 0
    for budget in (1500, 24000):
        sim = Simulation(0, keep_trace=False)
        adapter = conv.build_adapter(parse_designs(spec)[0], sim, budget, conv.drawn_for(instance))
        for s in conv.conversation_steps(instance):
            req = adapter.step(s)
            if s.question_id is not None and req.exact is not None:
                carried += 1
                assert req.exact == request_tokens(req.parts), (spec, budget)
        sim.close()
    assert carried or spec == "merchantbench:fixed"
    if spec == "merchantbench":
        assert carried == 2 * len(instance.questions)


class _Plugin:
    """A plugin adapter as a third party writes it: no conversation fields read, no lost_reason."""

    name = "toy"

    def __init__(self, sim, budget, drawn, *, variant=None, knobs=None):
        self.budget, self.texts = budget, []

    def step(self, step: WorkStep) -> ModelRequest:
        self.texts.append(step.observation + (f"\n{step.question}" if step.question else ""))
        keep, used = [], 0
        for t in reversed(self.texts):
            used += len(t) // 4
            if used > self.budget:
                break
            keep.append(t)
        return ModelRequest(("system", *reversed(keep)), None, "buffer")

    def storage(self) -> StorageStats:
        return StorageStats(0, 0, 0)


def test_a_plugin_adapter_runs_unchanged_with_the_generic_reason(instance, monkeypatch):
    monkeypatch.setattr(conv, "build_adapter", lambda spec, sim, budget, drawn: _Plugin(sim, budget, drawn))
    rows = conv.run_design(instance, DesignSpec("toy", "toy"), 1500)
    assert rows and any(json.loads(r["lost"]) for r in rows)
    assert {why for r in rows for _t, why in json.loads(r["lost"])} == {GENERIC_REASON}
    assert any(r["evidence_in_context"] for r in conv.run_design(instance, DesignSpec("toy", "toy"), 100_000))


def test_presence_is_whole_text_verbatim_or_json_escaped():
    text = 'She said "hi"\nthen left — café'
    assert present(text, f"x {text} y")
    assert present(text, json.dumps({"content": text}))
    assert present(text, json.dumps({"content": text}, ensure_ascii=True))
    assert not present(text, text[:-1])
    assert not present("", "anything")


def test_answer_in_context_skips_abstention(instance):
    q = dataclasses.replace(instance.questions[0], answer=None, abstention=True)
    row = Scorer(instance).score(q, "x", 1000, ("nothing here",), 3)
    assert row["answer_in_context"] is None
    q2 = dataclasses.replace(instance.questions[0], answer="MiXeD Case")
    assert Scorer(instance).score(q2, "x", 1000, ("a mixed case b",), 3)["answer_in_context"] == 1


def test_workers_and_determinism(tmp_path):
    """--workers 2 gives the rows one worker gives, and a second run gives them again.

    The instances are a real LongMemEval-shaped file (a monkeypatched reader would not reach a worker
    forked before the patch: bench workers may be forked once and reused)."""
    from sim.conversations.synth import longmemeval_instance

    path = tmp_path / "lme.json"
    path.write_text(json.dumps([longmemeval_instance(7, k, 6, 6) for k in range(3)]))
    specs = parse_designs("rsiagent,tracecraft")

    def strip(rows):
        return [{k: r[k] for k in QUESTION_COLUMNS} for r in rows]

    one = conv.run_conversations(specs, [2000, 8000], "longmemeval", str(path))
    assert len(one) == 3 * 2 * (2 + 3)  # instances × windows × (designs + baselines), one question each
    two = conv.run_conversations(specs, [2000, 8000], "longmemeval", str(path), workers=2)
    again = conv.run_conversations(specs, [2000, 8000], "longmemeval", str(path))
    assert strip(one) == strip(two) == strip(again)


def test_outputs_and_report(tmp_path, instance):
    from sim.conversations_outputs import write_outputs
    from sim.outputs import Outputs

    evil = dataclasses.replace(instance, instance_id="<script>alert(1)</script>")
    rows = conv.run_instance(evil, parse_designs("tracecraft")[0], (3000,))
    rows += conv.run_instance(evil, DesignSpec("oracle", "oracle"), (3000,))
    o = Outputs()
    with o.transaction():
        write_outputs(rows, tmp_path / "out", outputs=o, html=True, title="t", plots=True)
    out = tmp_path / "out"
    with open(out / "questions.csv") as fh:
        got = list(csv.DictReader(fh))
    from sim.conversations.retrieval import COLUMNS as RETRIEVAL_COLUMNS

    assert list(got[0]) == [*QUESTION_COLUMNS, *RETRIEVAL_COLUMNS] and len(got) == len(rows)
    with open(out / "aggregate.csv") as fh:
        agg = list(csv.DictReader(fh))
    assert {"evidence_recall_turn", "evidence_recall_session", "answer_recall", "question_type"} <= set(
        agg[0]
    )
    assert {a["question_type"] for a in agg} == {"all", *(q.question_type for q in instance.questions)}
    db = sqlite3.connect(out / "results.db")
    assert db.execute("select count(*) from questions").fetchone()[0] == len(rows)
    db.close()
    page = (out / "index.html").read_text()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert" in page  # the drill-down lists the lost turns, escaped
    assert "provider window (tokens)" in page and "recall-by-type" in page and "lost-reasons" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    pytest.importorskip("matplotlib")
    assert (out / "evidence_recall_vs_budget.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "request_tokens_vs_budget.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("design", DESIGNS)
def test_built_in_adapters_meet_the_conversation_contract(design):
    from sim.registry import design as lookup
    from sim.testing import check_conversation

    d = lookup(design)
    assert check_conversation(d.adapter_class(), d.name, d.parse_knobs({})) == []


def test_the_conversation_contract_check_can_fail():
    from sim.testing import check_conversation

    assert check_conversation(_Plugin, "toy", None) == []

    class Forgetful(_Plugin):
        def step(self, step: WorkStep) -> ModelRequest:
            return ModelRequest(("system",), None, "x")

    class Vague(_Plugin):
        def lost_reason(self, turn_id: str) -> str:
            return ""

    assert any("question is not inside" in p for p in check_conversation(Forgetful, "toy", None))
    assert any("lost_reason" in p for p in check_conversation(Vague, "toy", None))


def test_nemsy_knows_which_turns_its_pages_hold_whole():
    """The adapter's record of each turn's page (kept whole or clipped) matches the pages Nemsy wrote."""
    inst = make_instance(3, sessions=3, turns=6, words=60)
    spec = parse_designs("nemsy", ["nemsy.page_tokens=300"])[0]
    sim = Simulation(0, keep_trace=False)
    adapter = conv.build_adapter(spec, sim, 8000, conv.drawn_for(inst))
    for s in conv.conversation_steps(inst):
        adapter.step(s)
    wholes = []
    for t in inst.turns:
        page, whole = adapter._page_of[t.turn_id]
        assert whole == present(t.text, adapter.nemsy.read_wiki_note(page) or "")
        wholes.append(whole)
    assert any(wholes) and not all(wholes)  # the budget kept some turns and clipped others
    sim.close()


def test_memsim_report_renders_a_conversation_output_dir(tmp_path, instance):
    from sim.conversations_outputs import write_outputs
    from sim.outputs import Outputs
    from sim.report import render_any

    rows = conv.run_instance(instance, parse_designs("tracecraft")[0], (3000,))
    o = Outputs()
    with o.transaction():
        write_outputs(rows, tmp_path / "out", outputs=o)
    page = render_any(tmp_path / "out")
    assert "real conversations" in page and "recall-by-type" in page


def test_abstention_questions_are_left_out_of_evidence_recall():
    """LongMemEval scores retrieval without its abstention instances: an ``_abs`` question's evidence stays
    in its row (marked ``abstention``) but moves neither recall mean."""
    from sim.conversations.metrics import aggregate as conv_aggregate

    base = {
        "workload": "longmemeval", "instance": "i", "question_type": "t", "design": "d", "budget": 1000,
        "request_tokens": 10, "over_window": 0, "evidence_turns": 2, "evidence_sessions": 1,
        "answer_in_context": None, "lost": "[]",
    }  # fmt: skip
    found = {**base, "question_id": "q", "evidence_in_context": 2, "sessions_in_context": 1, "abstention": 0}
    missed = {**base, "question_id": "q_abs", "evidence_in_context": 0, "sessions_in_context": 0}
    missed["abstention"] = 1
    overall = next(a for a in conv_aggregate([found, missed]) if a["question_type"] == "all")
    assert overall["evidence_recall_turn"] == 1.0 and overall["evidence_recall_session"] == 1.0
    assert overall["questions"] == 2
