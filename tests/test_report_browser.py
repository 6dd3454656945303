"""Each kind of report page opened in headless Chromium: no console error, no network request, the key
elements present and drawn, and a screenshot saved under the test's tmp path (CI keeps it as an artifact).

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it), driven by Playwright with that
executable; where either is missing the tests skip with a one-line reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim import bench, bench_outputs, ledger
from sim import scenario as sc
from sim.report import headlines, render_claims, render_index, render_run

pytestmark = pytest.mark.xdist_group("chromium")

CHROMIUM = os.environ.get("MEMSIM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCENARIO = "tracecraft_skewed_team"  # two variants (faithful, fixed) on one timeline per agent
CLAIM = "merchantbench.suffix-eviction"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo's layout: a run page (a scenario running two variants side by side), the claims page, the
    bench page and the index opening with the findings per design."""
    out = tmp_path_factory.mktemp("site")
    (out / "traces").mkdir()
    trace = out / "traces" / f"{SCENARIO}.db"
    sc.execute(SCENARIO, trace_path=trace)
    (out / "traces" / f"{SCENARIO}.html").write_text(render_run(trace), encoding="utf-8")
    rows = [r for r, _ in ledger.run_all(profile="quick", only=[CLAIM], progress=False)]
    doc = ledger.to_json(rows, profile="quick", seed=0)
    (out / "claims.html").write_text(render_claims(doc), encoding="utf-8")
    cells = bench.run_sweep(
        bench.tasks_for(["merchantbench", "oracle"], [4000, 16000], 1, 20), progress=False
    )
    bench_outputs.write_outputs(cells, out / "bench", html=True)
    links = [
        (f"scenario {SCENARIO}", f"traces/{SCENARIO}.html", "a run"),
        ("claims ledger", "claims.html", "one claim"),
        ("benchmark", "bench/index.html", f"{len(cells)} cells"),
    ]
    found = headlines(doc, cells, 16000, {"tracecraft": [(SCENARIO, f"traces/{SCENARIO}.html")]})
    (out / "index.html").write_text(render_index("memsim demo", links, findings=found), encoding="utf-8")
    from sim.bench.tasks import parse_designs
    from sim.conversations.example import EXAMPLE_SAMPLE
    from sim.conversations.run import run_conversations
    from sim.conversations.samples import sample_path
    from sim.conversations_outputs import write_outputs
    from sim.outputs import Outputs

    conv = run_conversations(
        parse_designs("nemsy,nemsy:fixed"), [1000, 8000], "longmemeval", str(sample_path(EXAMPLE_SAMPLE))
    )
    o = Outputs()
    with o.transaction():
        write_outputs(conv, out / "conversations", outputs=o, html=True, title="sample")
    pages = {"run": out / "traces" / f"{SCENARIO}.html", "claims": out / "claims.html",
             "bench": out / "bench" / "index.html", "index": out / "index.html",
             "conversations": out / "conversations" / "index.html"}  # fmt: skip
    return {"pages": pages, "claims": len(doc["claims"]), "bench_rows": len(bench.aggregate(cells))}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium context with a fresh profile. Without Chromium or Playwright it skips, except in
    CI (``CI`` set, as .ci/run runs), which installs both: there a missing browser is a failure."""
    missing = ""
    if CHROMIUM is None:
        missing = "headless Chromium is not installed (apt-get install chromium; .ci/run does)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = missing or "playwright is not installed (pip install -e '.[test]')"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {missing}")
        pytest.skip(missing)
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str]]:
    """Open *path*; return the page, its console errors (and page errors) and its network requests."""
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type in ("error", "assert") else None
    )
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    own = path.resolve().as_uri()
    page.on(
        "request", lambda r: None if r.url in (own,) or r.url.startswith("data:") else requests.append(r.url)
    )
    page.goto(own, wait_until="load")
    return page, errors, requests


def _check(page: Any, errors: list[str], requests: list[str], shot: Path) -> None:
    page.screenshot(path=str(shot), full_page=True)
    assert errors == [], errors
    assert requests == [], requests
    assert shot.stat().st_size > 1000


WIDTHS = (1400, 800)

#: Tables wider than their box, without a visible hint above it saying how to see the rest; and whether
#: the page itself is wider than the viewport.
HIDDEN_COLUMNS = """() => {
  const bad = [];
  for (const t of document.querySelectorAll("main table")) {
    const box = t.closest(".scroll") || t.parentElement;
    if (box.clientWidth === 0) continue;  // in a closed <details>
    const over = box.scrollWidth > box.clientWidth + 1 || box.getBoundingClientRect().right > innerWidth + 1;
    const hint = box.previousElementSibling;
    const shown = hint && hint.classList.contains("scroll-hint") && !hint.hidden && hint.offsetHeight > 0;
    if (over && !shown) bad.push(t.id || t.className || "table");
  }
  return {bad, page: document.documentElement.scrollWidth, view: innerWidth};
}"""

#: Per chart: its axis titles, and per series its label (text, and whether it lies inside the drawing).
CHART_LABELS = """(sel) => Array.from(document.querySelectorAll(sel)).map(svg => {
  const vb = svg.viewBox.baseVal;
  const inside = (el) => {
    const b = el.getBBox();
    return b.width > 0 && b.y >= vb.y - 1 && b.y + b.height <= vb.y + vb.height + 1;
  };
  const title = (axis) => Array.from(svg.querySelectorAll("text.axis-title." + axis))
    .map(e => e.textContent.trim()).join("");
  return {
    label: svg.getAttribute("aria-label"), x: title("x"), y: title("y"),
    series: Array.from(svg.querySelectorAll("g.series")).map(g => {
      const t = g.querySelector("text.series-label");
      return {name: g.dataset.design, text: t ? t.textContent.trim() : "", inside: t ? inside(t) : false};
    }),
  };
})"""


def _at_widths(browser: Any, path: Path, shot: Path) -> Iterator[Any]:
    """The page at each of :data:`WIDTHS`, checked for errors and network use, screenshot kept."""
    page, errors, requests = _open(browser, path)
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 900})
        page.wait_for_timeout(0)  # let the resize handler run (no sleep: a zero-delay task turn)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        yield page
        _check(page, errors, requests, shot.with_name(f"{shot.stem}-{w}.png"))


#: The smallest chart text on screen (CSS px, after the SVG's scaling) and the text that has it.
MIN_CHART_TEXT = """() => { let m = 1e9, which = "";
  for (const t of document.querySelectorAll("svg.chart text")) {
    if (!t.getClientRects().length || !t.textContent.trim()) continue;
    const ctm = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b);
    if (px < m) { m = px; which = t.textContent; }
  }
  return [m, which, document.documentElement.scrollWidth, innerWidth]; }"""


def _readable_charts(page: Any) -> None:
    """At 800 px no chart text is drawn under 9 px (a chart scrolls in its box instead), and the page
    itself does not scroll sideways."""
    if page.viewport_size["width"] > 800:
        return
    smallest, which, width, view = page.evaluate(MIN_CHART_TEXT)
    assert smallest >= 8.99, f"chart text {which!r} drawn at {smallest:.1f} px"
    assert width <= view


def _no_hidden_columns(page: Any) -> None:
    fit = page.evaluate(HIDDEN_COLUMNS)
    assert fit["bad"] == [], f"tables wider than the viewport with no visible way to the rest: {fit}"
    assert fit["page"] <= fit["view"], f"the page scrolls sideways: {fit}"


def test_the_run_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """Each agent's timeline is drawn with its axis titles; its series carry the variants' names, in the
    order they ran (faithful before fixed); the per-variant findings give both denominators; no table
    hides columns."""
    for page in _at_widths(browser, site["pages"]["run"], tmp_path / "run.png"):
        timelines = page.locator("svg.chart.timeline")
        assert timelines.count() >= 1
        box = timelines.first.bounding_box()
        assert box is not None and box["width"] > 600 and box["height"] > 200
        assert page.locator("svg.chart.timeline .band").count() >= 1
        titles = page.evaluate(CHART_LABELS, "svg.chart.timeline")
        assert titles and all(t["x"] == "request #" and t["y"] == "tokens" for t in titles), titles
        lanes = page.evaluate(CHART_LABELS, "svg.chart.lanes")
        assert len(lanes) == 1 and "simulation time" in lanes[0]["x"]  # y: one labelled lane per agent
        series = page.evaluate(
            "() => Array.from(document.querySelectorAll('h3.timeline-agent + .legend')).map("
            "l => Array.from(l.querySelectorAll('.series')).map(s => s.dataset.series))"
        )
        assert series and all(s == ["faithful", "fixed"] for s in series), series
        summary = page.locator("#summary").inner_text()
        assert "faithful:" in summary and "fixed:" in summary and "distinct facts" in summary
        assert page.locator("#meta-table th", has_text="memsim_version").count() == 1
        tiles = page.locator(".stat span", has_text="needed facts present at probes").all_inner_texts()
        assert tiles == ["needed facts present at probes: faithful", "needed facts present at probes: fixed"]
        _no_hidden_columns(page)
        _readable_charts(page)


def test_the_claims_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """One ledger row per claim, the counterexample printed, every in-page link lands, and no table hides
    columns at either width."""
    for page in _at_widths(browser, site["pages"]["claims"], tmp_path / "claims.png"):
        assert page.locator("tr.claim-row").count() == site["claims"]
        assert page.locator("pre.example").count() >= 1
        dangling = page.evaluate(
            "() => Array.from(document.querySelectorAll('a[href^=\"#\"]'))"
            ".filter(a => !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))))"
            ".map(a => a.getAttribute('href'))"
        )
        assert dangling == []
        assert page.locator("code.replay").count() >= 1
        statements = page.locator("#verdicts tr.claim-row td.statement").all_inner_texts()
        assert len(statements) == site["claims"] and all(len(s) > 20 for s in statements), statements
        assert page.locator("#verdicts th", has_text="seconds").count() == 1
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 10 * 900, f"the claims page is {height} px tall by default"
        page.locator(f"#verdicts a[href='#claim-{CLAIM}']").click()  # a link opens the claim's details
        assert page.locator(f"[id='claim-{CLAIM}'] pre.example").first.is_visible()
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = false)")
        _no_hidden_columns(page)


def test_the_bench_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """Every chart has axis titles and a visible label per series (inside the drawing, even where several
    sit at 0); at 1400 px the aggregate tables fit whole, and no table hides columns at 800 px; the plots
    decode; the recall cells say when the seeds are too few; the cell filter works."""
    for page in _at_widths(browser, site["pages"]["bench"], tmp_path / "bench.png"):
        charts = page.evaluate(CHART_LABELS, "svg.chart.bench:not(.tradeoff)")
        assert len(charts) == 3
        tradeoff = page.evaluate(CHART_LABELS, "svg.chart.tradeoff")
        assert len(tradeoff) == 1 and tradeoff[0]["y"] == "probe recall" and "tokens" in tradeoff[0]["x"]
        assert [s["text"] for s in tradeoff[0]["series"]] == ["merchantbench"]
        _readable_charts(page)
        for c in charts:
            assert c["x"] == "provider window (tokens)" and c["y"], c
            assert {s["name"] for s in c["series"]} == {"merchantbench", "oracle"}, c
            assert all(s["text"] == s["name"] and s["inside"] for s in c["series"]), c
        _no_hidden_columns(page)
        if page.viewport_size["width"] >= 1400:
            wide = page.evaluate(
                "() => Array.from(document.querySelectorAll('table.aggregate')).filter(t => "
                "t.closest('.scroll').scrollWidth > t.closest('.scroll').clientWidth + 1).map(t => t.id)"
            )
            assert wide == []
        rows = page.locator("table.aggregate[data-rows] tbody tr[data-design]").count()
        assert rows == site["bench_rows"]
        assert "too few to conclude" in page.locator("#summary").inner_text()
    sizes = page.evaluate("() => Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)")
    if importlib.util.find_spec("matplotlib") is not None:
        assert sizes and all(w > 0 for w in sizes), sizes
    else:
        assert sizes == []
    if not page.locator("#cells-table").is_visible():
        page.locator("details:has(#cells-table) > summary").click()
    page.fill('input[data-filter="cells-table"]', "oracle")
    shown = page.evaluate(
        "() => Array.from(document.querySelectorAll('#cells-table tbody tr'))"
        ".filter(r => !r.hidden).map(r => r.cells[0].textContent.trim())"
    )
    assert shown and set(shown) == {"oracle"}


def test_the_index_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """The index opens with the headline numbers per design (claim verdicts, recall and tokens at the
    window), each linking to its evidence on a page beside it, and links every page."""
    root = site["pages"]["index"].parent
    for page in _at_widths(browser, site["pages"]["index"], tmp_path / "index.png"):
        mb = page.locator('#findings tr[data-design="merchantbench"]:not(.modes)')
        text = mb.inner_text()
        assert "1 of 1 failure mode reproduced on upstream's design" in text
        assert re.search(r"1/1 counterexamples found", mb.text_content() or "")  # hidden under 1000 px
        modes = page.locator('#findings tr.modes[data-design="merchantbench"] li').all_inner_texts()
        assert len(modes) == 1 and modes[0].startswith("A fact observed but not saved"), modes
        assert re.search(r"\b[01]\.\d{3}\b", text), text  # recall at the window
        assert re.search(r"\b\d[\d,]*\b", mb.locator("td").nth(3).inner_text())  # tokens per request
        assert "too few to conclude" in text or "seed" in text
        hrefs = page.evaluate(
            "() => Array.from(document.querySelectorAll('#findings a, #reports a'))"
            ".map(a => a.getAttribute('href'))"
        )
        assert "claims.html#system-merchantbench" in hrefs and f"traces/{SCENARIO}.html" in hrefs
        assert all((root / h.split("#")[0]).is_file() for h in hrefs)
        assert page.locator("#reports a").count() == 3
        _no_hidden_columns(page)
    claims = (root / "claims.html").read_text()
    assert 'id="system-merchantbench"' in claims


#: Per chart of the question types: how many of its x-axis labels' drawn boxes (each label's box turned
#: as it is drawn, on screen) intersect another's (separating-axis test on the two rectangles).
LABEL_OVERLAP = """() => Array.from(document.querySelectorAll("figure[data-window] svg")).map(svg => {
  const quads = Array.from(svg.querySelectorAll("text.type-label")).map(t => {
    const b = t.getBBox(), m = t.getScreenCTM(), p = svg.createSVGPoint();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => { p.x = x; p.y = y; const q = p.matrixTransform(m); return [q.x, q.y]; });
  });
  const apart = (a, b) => [a, b].some(poly => poly.some((p, i) => {
    const q = poly[(i + 1) % 4], nx = q[1] - p[1], ny = p[0] - q[0];
    const proj = (s) => s.map(([x, y]) => x * nx + y * ny);
    const pa = proj(a), pb = proj(b);
    return Math.max(...pa) <= Math.min(...pb) + 0.5 || Math.max(...pb) <= Math.min(...pa) + 0.5;
  }));
  let overlaps = 0;
  for (let i = 0; i < quads.length; i++)
    for (let j = i + 1; j < quads.length; j++) if (!apart(quads[i], quads[j])) overlaps++;
  return {labels: quads.length, overlaps};
})"""


def test_the_conversations_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """The question-type labels under the bars do not overlap (and name n), the design and its variant
    are drawn in different colours, the question column shows question text, chart text stays readable."""
    for page in _at_widths(browser, site["pages"]["conversations"], tmp_path / "conversations.png"):
        charts = page.evaluate(LABEL_OVERLAP)
        assert charts and all(c["labels"] >= 4 and c["overlaps"] == 0 for c in charts), charts
        labels = page.locator("text.type-label").all_text_contents()
        assert all(re.search(r"\(n=\d+\)$", t) for t in labels), labels
        fills = page.evaluate(
            "() => Array.from(document.querySelectorAll('figure[data-window] g.series'))"
            ".map(g => [g.dataset.design, g.getAttribute('fill')])"
        )
        by = dict(fills)
        assert by["nemsy"] != by["nemsy:fixed"], fills
        questions = page.locator("#drill td.question").all_inner_texts()
        assert questions and all(" " in q for q in questions), questions  # words, not an id
        _no_hidden_columns(page)
        _readable_charts(page)
