"""Each kind of report page opened in headless Chromium: no console error, no network request, the key
elements present and drawn, and a screenshot saved under the test's tmp path (CI keeps it as an artifact).

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it), driven by Playwright with that
executable; where either is missing the tests skip with a one-line reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sim import bench, ledger
from sim import scenario as sc
from sim.report import render_claims, render_index, render_run

pytestmark = pytest.mark.xdist_group("chromium")

CHROMIUM = os.environ.get("MEMSIM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCENARIO = "nemsy_recency_window"
CLAIM = "merchantbench.suffix-eviction"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo's layout: a run page, the claims page, the bench page and the index linking them."""
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
    bench.write_outputs(cells, out / "bench", html=True)
    links = [
        (f"scenario {SCENARIO}", f"traces/{SCENARIO}.html", "a run"),
        ("claims ledger", "claims.html", "one claim"),
        ("benchmark", "bench/index.html", f"{len(cells)} cells"),
    ]
    (out / "index.html").write_text(render_index("memsim demo", links), encoding="utf-8")
    pages = {"run": out / "traces" / f"{SCENARIO}.html", "claims": out / "claims.html",
             "bench": out / "bench" / "index.html", "index": out / "index.html"}  # fmt: skip
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
            viewport={"width": 1200, "height": 900},
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


def test_the_run_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """The context-window timeline and the swim lanes are drawn (non-empty boxes), the findings listed."""
    page, errors, requests = _open(browser, site["pages"]["run"])

    timelines = page.locator("svg.chart.timeline")
    assert timelines.count() >= 1
    box = timelines.first.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 200
    assert page.locator("svg.chart.timeline .band").count() >= 1
    assert page.locator("svg.chart.lanes").count() == 1
    assert page.locator("#summary li").count() >= 3
    assert page.locator("#meta-table th", has_text="memsim_version").count() == 1
    _check(page, errors, requests, tmp_path / "run.png")


def test_the_claims_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """One ledger row per claim, the counterexample printed, and every record link lands on its entry."""
    page, errors, requests = _open(browser, site["pages"]["claims"])

    assert page.locator("tr.claim-row").count() == site["claims"]
    assert page.locator("pre.example").count() >= 1
    dangling = page.evaluate(
        "() => Array.from(document.querySelectorAll('a[href^=\"#\"]'))"
        ".filter(a => !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))))"
        ".map(a => a.getAttribute('href'))"
    )
    assert dangling == []
    assert page.locator("code.replay").count() >= 1
    _check(page, errors, requests, tmp_path / "claims.png")


def test_the_bench_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """The aggregate rows, the SVG series and the plot images, decoded; the cell filter works."""
    page, errors, requests = _open(browser, site["pages"]["bench"])

    assert page.locator("#aggregate-table tbody tr").count() == site["bench_rows"]
    assert page.locator("svg.chart.bench g.series").count() >= 2
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
    _check(page, errors, requests, tmp_path / "bench.png")


def test_the_index_page(browser: Any, site: dict[str, Any], tmp_path: Path) -> None:
    """The index links every page, and every link resolves to a file beside it."""
    page, errors, requests = _open(browser, site["pages"]["index"])

    hrefs = page.evaluate(
        "() => Array.from(document.querySelectorAll('#reports a')).map(a => a.getAttribute('href'))"
    )
    assert len(hrefs) == 3
    root = site["pages"]["index"].parent
    assert all((root / h).is_file() for h in hrefs)
    _check(page, errors, requests, tmp_path / "index.png")
    assert json.dumps(hrefs)  # the links are plain relative paths
