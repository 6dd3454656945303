"""The run page (``sim.report.render_run``): real scenario traces and synthetic ones with every element.

A synthetic trace is written through :class:`sim.trace.Trace` itself, so it has the real schema: requests
with labelled parts, window and trigger in their detail, probes that hit and miss, the design's markers,
a failure and a crash. The large one (100,000+ operations) checks that the page is reduced, not dumped.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim import scenario as sc
from sim.errors import UsageError
from sim.report import charts, render_any, render_run
from sim.report.facts import FactSet, numbered
from sim.report.runview import MAX_NOTABLE, display_name
from sim.trace import Trace, TraceError, decode_facts, encode_facts, read_trace

HOSTILE = '<script>alert("x")</script>'


def synthetic_trace(path: Path, *, steps: int, ops_per_step: int = 3, agents: int = 2) -> Path:
    """A complete merchantbench-named trace: *steps* requests per agent and *ops_per_step* ops each."""
    clock = [0.0]
    tr = Trace(path, keep=False, now=lambda: clock[0])
    tr.set_meta(scenario="synthetic", seed=5, faults=["crash@x.y"], store="memory", params={"window": 8000})
    names = ["agent_0", HOSTILE][:agents] + [f"agent_{i}" for i in range(2, agents)]
    for step in range(steps):
        clock[0] = float(step)
        for a, agent in enumerate(names):
            facts = {f"FACT-{n:04d}" for n in range(max(1, step - 20), step + 2)}
            probe = step % 10 == 9
            needed = {"FACT-0001" if a else f"FACT-{step:04d}"} if probe else set()
            by_kind = {"system": 300, "tools": 200, "message": 100 * (step % 40), "memory": 50 + a}
            tr.request(
                "merchantbench", "react.hop", agent=agent, exact_tokens=sum(by_kind.values()),
                estimate=int(sum(by_kind.values()) * 1.2), messages=4, facts=facts, needed=needed,
                tokens_by_kind=by_kind, window=8000, trigger=6000,
            )  # fmt: skip
            for k in range(ops_per_step):
                tr.op("merchantbench", "act", agent=agent, k=k)
            if step % 40 == 39:
                tr.op("merchantbench", "compaction_trigger", agent=agent)
                tr.op("merchantbench", "compact", agent=agent, before=40, after=5)
    tr.op("merchantbench", "write_memory_doc", agent="agent_0", phase="fail", error="disk full")
    tr.op("merchantbench", "act", agent="agent_0", phase="crash", error="crash at x.y")
    tr.close(complete=True)
    return path


@given(st.sets(st.integers(0, 12000), max_size=60), st.sets(st.sampled_from(["FACT-00017", "x", "FACT-7"])))
def test_fact_sets_read_the_encoded_column_like_decode_facts(nums: set[int], odd: set[str]) -> None:
    """Size, membership, overlap and difference on intervals agree with the expanded sets."""
    ids = {f"FACT-{n:04d}" for n in nums} | odd
    other = {f"FACT-{n + 1:04d}" for n in nums if n % 3}
    a, b = FactSet.parse(encode_facts(ids)), FactSet.parse(encode_facts(other))

    assert a.ids() == decode_facts(encode_facts(ids)) == frozenset(ids)
    assert len(a) == len(ids)
    assert all(f in a for f in ids) and "FACT-99999" not in a
    assert a.overlap(b) == len(ids & other)
    gone = [f"FACT-{n:04d}" for n in sorted(nums) if f"FACT-{n:04d}" not in other] + sorted(odd)
    assert a.minus(b, 10_000) == gone and a.minus(b, 3) == gone[:3]
    probe = sorted(other | odd | {"FACT-0003", "FACT-99999"})
    bits = {f: 1 << i for i, f in enumerate(probe)}
    assert a.mask(*numbered(bits)) == sum(b for f, b in bits.items() if f in ids)


def test_a_real_scenario_page_shows_its_timeline_lanes_and_meta(tmp_path: Path) -> None:
    """nemsy_recency_window (which records its requests): a timeline per route, swim lanes, the run's meta."""
    trace = tmp_path / "run.db"
    sc.execute("nemsy_recency_window", trace_path=trace)

    page = render_run(trace)

    assert "<h1>run: nemsy_recency_window</h1>" in page
    assert page.count('<svg class="chart timeline"') >= 1 and 'data-route="wiki.query"' in page
    assert '<svg class="chart lanes"' in page
    meta = page[page.index('id="meta-table"') :]
    assert '<th>seed</th><td><span class="mono">11</span>' in meta
    assert "<th>memsim_version</th>" in meta and "<th>store</th>" in meta and "<th>params</th>" in meta
    assert "Marked:" in page and "ingest" in page  # Nemsy's declared markers are named


def test_a_crash_is_marked_in_the_findings_the_lanes_and_the_listing(tmp_path: Path) -> None:
    """A crash fault's record is a finding, a black diamond in its lane and a red row in the listing."""
    trace = tmp_path / "crash.db"
    fault = "crash@merchantbench.write_memory_doc.after_document"
    sc.execute("merchantbench_suffix_eviction", faults=[fault], trace_path=trace)

    page = render_run(trace)

    crashes = [r for r in read_trace(trace).ops if r.phase == "crash"]
    first = crashes[0]

    assert crashes
    assert re.search(rf"Faults: {re.escape(fault)}; {len(crashes)} crash records?[ ,]", page)
    assert f"(crash in {first.op} by {first.agent}" in page
    diamond = r'<path d="M[\d.]+ [\d.]+l7 9l-7 9l-7 -9z" fill="#000000">'
    assert re.search(rf"{diamond}<title>{first.agent} · {first.op} \(crash\)", page)
    assert f'<tr class="bad"><td class="n">{first.seq}</td>' in page


def test_every_element_of_a_labelled_trace_is_drawn(tmp_path: Path) -> None:
    """Stacked kinds, window and trigger, the estimate, probe hits and misses, marker rugs, fail and crash."""
    page = render_run(synthetic_trace(tmp_path / "syn.db", steps=80))

    for kind in ("system", "tools", "memory", "message"):
        assert f'data-kind="{kind}"' in page
    assert (
        ">window 8,000</text>" in page
        and ">trigger 6,000</text>" in page
        and ">design&#39;s estimate</text>" in page
    )
    assert '<g class="probe hit">' in page and '<g class="probe miss">' in page
    assert ">compaction (2)</text>" in page and ">reminder (2)</text>" in page
    assert 'class="rug crash"' in page and 'class="rug fail"' in page
    # agent_0 needs the newest fact (present); the other needs FACT-0001, which leaves after step 20
    assert "16 probes needed 16 facts: 10 present, 6 missing (first miss: FACT-0001 at t=29 s" in page
    assert "<h3>Largest fact drops</h3>" in page
    assert '<g class="raster-row" data-fact="FACT-0001">' in page  # the needed facts, request by request
    assert "FACT-0001: missing at the probe (t=29 s)" in page


def test_probe_scores_agree_with_the_benchmark_metrics(tmp_path: Path) -> None:
    """A benchmark cell's trace (real requests with probes): the page's hits are the cell's recall."""
    from sim.bench import run_task, tasks_for

    row = run_task(tasks_for(["merchantbench"], [4000], 1, 60)[0], trace_path=str(tmp_path / "cell.db"))
    page = render_run(tmp_path / "cell.db")

    hits = round(row["recall"] * row["probes"])
    assert f"<b>{hits}/{row['probes']}</b><span>needed facts present at probes</span>" in page
    assert page.count('<tr class="miss">') + page.count('<tr class="hit">') == row["probes"]
    assert ">budget 4,000</text>" in page  # the cell's budget, from the trace's meta


def test_every_text_from_the_trace_is_escaped(tmp_path: Path) -> None:
    """An agent named like markup appears as text, never as markup (autoescaping is on)."""
    page = render_run(synthetic_trace(tmp_path / "syn.db", steps=12))

    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page


@pytest.mark.slow
def test_a_large_trace_is_reduced_and_says_so(tmp_path: Path) -> None:
    """100,000+ operations: columns bucketed, lanes binned, only notable operations listed, page bounded."""
    trace = synthetic_trace(tmp_path / "big.db", steps=20_000, ops_per_step=2, agents=3)
    page = render_run(trace)

    assert "<b>123,002</b><span>operations</span>" in page  # the headline counts every operation
    timelines = page.split('<svg class="chart timeline"')[1:]
    assert len(timelines) == 3
    for t in timelines:
        assert t.split("</svg>")[0].count('<rect class="hover"') <= charts.MAX_COLUMNS
    assert "(each column: 84 consecutive requests, the largest shown)" in page
    assert "each of 300 bins" in page
    listing = page[page.index('id="op-list"') :].split("</table>")[0]
    assert listing.count("<tr") - 1 <= MAX_NOTABLE
    assert len(page.encode()) < 2_000_000


def test_the_same_trace_gives_the_same_page_wherever_it_lies(tmp_path: Path) -> None:
    """No clock and no directory in the page: a copy elsewhere renders byte-identically."""
    trace = synthetic_trace(tmp_path / "syn.db", steps=30)
    elsewhere = tmp_path / "other" / "syn.db"
    elsewhere.parent.mkdir()
    shutil.copy(trace, elsewhere)

    assert render_run(trace) == render_run(trace) == render_run(elsewhere)


def test_a_staged_trace_is_named_by_its_final_name() -> None:
    """The CLI renders the staged copy (``.NAME.partial-PID``); the page names the final file."""
    assert display_name(Path("out/.run.db.partial-4242")) == "run.db"
    assert display_name(Path("out/run.db")) == "run.db"


def test_a_trace_without_requests_says_what_it_cannot_show(tmp_path: Path) -> None:
    """No requests: a finding and a note instead of a timeline; the lanes still show the operations."""
    tr = Trace(tmp_path / "ops.db", keep=False)
    tr.set_meta(scenario="ops-only", seed=1)
    tr.op("tracecraft", "send", agent="alice", to="bob")
    tr.close(complete=True)

    page = render_run(tmp_path / "ops.db")

    assert 'id="no-requests"' in page and '<svg class="chart lanes"' in page
    assert "mail sent" in page  # Tracecraft's marker label for send


def test_render_any_dispatches_and_refuses_other_files(tmp_path: Path) -> None:
    """A trace renders as a run page; text, a non-ledger JSON and an unfinished trace are one-line errors."""
    trace = synthetic_trace(tmp_path / "syn.db", steps=5)
    assert render_any(trace) == render_run(trace)
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "x.json").write_text(json.dumps({"rows": []}))
    (tmp_path / "bad.json").write_text("{")
    unfinished = Trace(tmp_path / "half.db", keep=False)
    unfinished.op("merchantbench", "act")
    unfinished.close(complete=False)
    cases = [("notes.txt", UsageError), ("x.json", UsageError), ("bad.json", UsageError),
             ("half.db", TraceError), ("missing.db", UsageError), ("empty", UsageError)]  # fmt: skip
    for name, error in cases:
        if name == "empty":
            (tmp_path / "empty").mkdir()
        with pytest.raises(error) as info:
            render_any(tmp_path / name)
        assert "\n" not in str(info.value)


def test_memsim_report_writes_the_page_and_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    """``memsim report TRACE.db`` writes TRACE.html (the same page); a text file exits 2 with one line."""
    trace = synthetic_trace(tmp_path / "syn.db", steps=10)
    (tmp_path / "notes.txt").write_text("hello")

    def memsim(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True, cwd=tmp_path
        )

    ok = memsim("report", str(trace))
    bad = memsim("report", str(tmp_path / "notes.txt"), "-o", str(tmp_path / "notes.html"))

    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "syn.html").read_text(encoding="utf-8") == render_run(trace)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and bad.stderr.startswith("memsim: error:")
    assert not (tmp_path / "notes.html").exists()


def test_variants_are_named_in_run_order_with_comparable_denominators(tmp_path: Path) -> None:
    """A scenario running variants side by side: each agent's series carry the variants' names (from the
    requests' ``variant`` detail, or the trace's ``variants`` meta of route → label), listed in the order
    they ran, and the findings give each variant's needed-fact checks and its distinct facts per agent."""
    trace = tmp_path / "reuse.db"
    sc.execute("tracecraft_cursor_reuse", trace_path=trace)
    page = render_run(trace)

    assert re.findall(r'data-series="([^"]+)"', page)[:2] == ["faithful", "fixed"]
    assert (
        "faithful: 21 of 33 needed facts present over 2 probes (64%); distinct facts (per agent): 21 of 33"
        in page
    )

    clock = [0.0]
    tr = Trace(tmp_path / "labels.db", keep=False, now=lambda: clock[0])
    tr.set_meta(scenario="synthetic", seed=1, variants={"hop.run2": "2 the fix", "hop.run1": "1 upstream"})
    for route in ("hop.run1", "hop.run1", "hop.run2", "hop.run2", "hop.run2"):
        clock[0] += 1
        tr.request(
            "merchantbench",
            route,
            agent="a",
            exact_tokens=10,
            estimate=None,
            messages=1,
            needed={"FACT-0001"},
        )
    tr.close(complete=True)
    page = render_run(tmp_path / "labels.db")
    assert re.findall(r'data-series="([^"]+)"', page) == ["1 upstream", "2 the fix"]
    assert '<span class="sw line" style="background:#4E79A7;height:5px"></span>1 upstream (2)' in page


def test_another_module_adds_a_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``sim.report.run.Section`` appended to ``SECTIONS`` gets its heading and nav link after the swim
    lanes, its fragment rendered with the run's view and its own context."""
    from sim.report import run as run_page

    seen: list[str] = []

    def ctx(view: Any) -> dict[str, Any]:
        seen.append(view.meta["scenario"])
        return {}

    monkeypatch.setattr(
        run_page, "SECTIONS", [run_page.Section("extra", "Extra part", "macros.html.j2", ctx)]
    )
    page = render_run(synthetic_trace(tmp_path / "t.db", steps=3))

    assert seen == ["synthetic"]
    assert (
        page.index('<h2 id="lanes">') < page.index('<h2 id="extra">Extra part</h2>') < page.index('id="ops"')
    )
    assert '<a href="#extra">extra part</a>' in page
