"""Report pages: one self-contained HTML file for a run, a claims ledger or a benchmark (issue 18).

Each page is rendered from Jinja2 templates shipped with this package (autoescaped; inline CSS, SVG and
a few lines of script; a Content-Security-Policy that allows no fetch), reads the same from disk as from
a server, and is byte-identical for the same input: nothing in it comes from the wall clock.

- :func:`render_run` — a trace (``memsim run --out DIR --html``, ``memsim report TRACE.db``);
- :func:`render_claims` — a claims ledger (``memsim claims --html FILE``, ``memsim report CLAIMS.json``);
- :func:`render_bench_rows` / :func:`render_bench` — a benchmark sweep (``memsim bench --html``);
- :func:`render_index` — the demo's index page (:func:`headlines`: the findings per design it opens with);
- :func:`render_any` — whichever of the first three *source* is.

Modules: :mod:`~sim.report.runview` (a trace read once and reduced), :mod:`~sim.report.facts` (fact sets
as intervals), :mod:`~sim.report.charts` (the run page's geometry), :mod:`~sim.report.run`,
:mod:`~sim.report.claims`, :mod:`~sim.report.bench`, :mod:`~sim.report.templating`, :mod:`~sim.report.fmt`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.report.bench import render_bench, render_bench_rows
from sim.report.claims import render_claims
from sim.report.index import headlines, render_index
from sim.report.run import render_run

__all__ = [
    "headlines",
    "render_any",
    "render_bench",
    "render_bench_rows",
    "render_claims",
    "render_index",
    "render_run",
]


def render_any(source: Path) -> str:
    """The page of *source*: a bench output directory, a trace (.db) or a claims ledger (.json).

    Anything else is a :class:`sim.errors.UsageError` with one line.
    """
    from sim.errors import UsageError
    from sim.limits import decode_text, load_json, read_bounded
    from sim.trace import is_trace

    source = Path(source)
    if source.is_dir():
        from sim.report.conversations import is_conversation_dir, render_conversations_dir

        if is_conversation_dir(source):  # a conversation sweep (issue 28)
            return render_conversations_dir(source)
        return render_bench(source)
    if not source.exists():
        raise UsageError(f"report input not found: {source}")
    if is_trace(source):
        return render_run(source)
    if source.suffix.lower() == ".json":
        from sim.report.inputs import MAX_LEDGER_BYTES

        text = decode_text(read_bounded(source, "claims ledger", MAX_LEDGER_BYTES), "claims ledger", source)
        doc: Any = load_json(text, "claims ledger", source)
        if not (isinstance(doc, dict) and isinstance(doc.get("claims"), list)):
            raise UsageError(f"{source} is not a claims ledger (`memsim claims --json FILE` writes one)")
        return render_claims(doc)
    raise UsageError(
        f"{source} is not a trace (.db), a claims ledger (.json) or a bench output directory"
        f" ({json.dumps(source.suffix) if source.suffix else 'no suffix'})"
    )
