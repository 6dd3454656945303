"""Report pages (placeholder API; the full pages are built in sim/report/)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any


def _page(title: str, body: str) -> str:
    t = html.escape(title)
    head = f"<!doctype html><html><head><meta charset='utf-8'><title>{t}</title></head>"
    return f"{head}\n<body><h1>{t}</h1>{body}</body></html>\n"


def render_run(trace_path: Path) -> str:
    from sim.trace import read_trace

    data = read_trace(trace_path)
    return _page(
        f"run {data.meta.get('scenario', '')}", f"<p>{len(data.ops)} ops, {len(data.requests)} requests</p>"
    )


def render_claims(doc: dict[str, Any]) -> str:
    return _page("claims", f"<p>{len(doc['claims'])} claims</p>")


def render_bench_rows(rows: list[dict[str, Any]], agg: list[dict[str, Any]], images: dict[str, bytes]) -> str:
    return _page("bench", f"<p>{len(rows)} cells</p>")


def render_bench(out_dir: Path) -> str:
    return _page("bench", f"<p>{html.escape(str(out_dir))}</p>")


def render_index(title: str, entries: list[tuple[str, str, str]]) -> str:
    items = "".join(
        f"<li><a href='{html.escape(h)}'>{html.escape(lbl)}</a> {html.escape(d)}</li>"
        for lbl, h, d in entries
    )
    return _page(title, f"<ul>{items}</ul>")


def render_any(source: Path) -> str:
    from sim.errors import UsageError
    from sim.replay import is_trace

    if source.is_dir():
        return render_bench(source)
    if is_trace(source):
        return render_run(source)
    if source.suffix == ".json":
        return render_claims(json.loads(source.read_text(encoding="utf-8")))
    raise UsageError(f"{source} is not a trace, a claims ledger or a bench directory")
