"""The sweep's PNG plots, with one stable colour per design label whatever else a run includes."""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from sim.outputs import Outputs
from sim.registry import ORACLE_COLOUR, PALETTE

#: The conversation benchmark's other baselines (issue 28), apart from every design's hue.
BASELINE_COLOURS = {"oracle-sessions": "#8C8C8C", "full": "#B5A300"}


def colour(label: str) -> str:
    """The colour of a design label (:func:`sim.registry.colours`: declared, or a fallback no other
    installed design has), the same in every run, plot and report whatever other designs run beside it;
    variants share it and draw dashed. A label of no installed design is hashed onto the palette."""
    if label == "oracle":
        return ORACLE_COLOUR
    if label in BASELINE_COLOURS:
        return BASELINE_COLOURS[label]
    base = label.split(":", 1)[0]
    from sim.registry import colours

    found = colours().get(base)
    if found is not None:
        return found
    return PALETTE[int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(PALETTE)]


def style(label: str) -> dict[str, Any]:
    """Colour and line style: variants of a design share its hue family but draw dashed."""
    return {"color": colour(label), "ls": "--" if ":" in label else "-"}


#: The plots' file names, in the order they are written.
PLOTS = ("tokens_over_time.png", "recall_vs_budget.png", "overflow_vs_budget.png")
#: The plot a helper draws with ``--workers N``: the largest of the three. Drawn away it left the default
#: sweep's output phase 0.28 s; the two budget plots away, 0.32 s.
AWAY = "tokens_over_time.png"
_BUDGET_PLOTS = {
    "recall_vs_budget.png": ("recall", "probe recall (mean over seeds)"),
    "overflow_vs_budget.png": ("over_window_sum", "requests over the window (sum over seeds)"),
}


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, or None when the plot extra is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def preload() -> None:
    """Import matplotlib (Agg) now and draw a throwaway figure, if it is installed: the imports and the
    first draw's font loading, which ``memsim bench --workers N`` does beside its workers' first cells
    instead of after the sweep (``run_sweep(aside=...)``)."""
    plt = _pyplot()
    if plt is None:
        return  # Plotter.finish() says so, once
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([1, 10, 100], [1, 1000, 10], label="warm up")
    ax.set_yscale("log")  # its tick labels are mathtext: the parser loads on first use (0.1 s)
    ax.set_title("warm up")
    ax.legend()
    fig.tight_layout()
    fig.savefig(io.BytesIO(), dpi=110, format="png")
    plt.close(fig)


def render(rows: list[dict[str, Any]], agg: list[dict[str, Any]], name: str) -> bytes:
    """The PNG bytes of the plot *name* (one of :data:`PLOTS`); matplotlib must be installed."""
    plt = _pyplot()
    assert plt is not None, "render() needs matplotlib: plot() checks first"
    if name == "tokens_over_time.png":
        fig = _tokens_over_time(plt, rows)
    else:
        fig = _against_budget(plt, rows, agg, *_BUDGET_PLOTS[name])
    try:
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, dpi=110, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)


def _tokens_over_time(plt: Any, rows: list[dict[str, Any]]) -> Any:
    budgets = sorted({r["budget"] for r in rows})
    seed0 = min(r["seed"] for r in rows)
    b_mid = budgets[len(budgets) // 2]
    fig, ax = plt.subplots(figsize=(10, 5))
    shown = [r for r in rows if r["seed"] == seed0 and r["budget"] == b_mid]
    for r in shown:
        ax.plot(
            [s[0] for s in r["series"]],
            [s[1] for s in r["series"]],
            label=r["design"],
            lw=1,
            **style(r["design"]),
        )
    ax.axhline(b_mid, color="k", ls=":", lw=0.8, label=f"provider window {b_mid:,}")
    if shown:
        load_steps = json.loads(shown[0]["drawn"])["steps"]
        ax.axvspan(load_steps, shown[0]["steps"], color="0.92", label="calm tail (liveness)")
    ax.set_xlabel("step")
    ax.set_ylabel("request tokens (exact cl100k)")
    ax.set_yscale("log")
    ax.set_title(f"Tokens per request over time (seed {seed0}, window {b_mid:,})")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def _against_budget(plt: Any, rows: list[dict[str, Any]], agg: list[dict[str, Any]], metric: str,
                    ylabel: str) -> Any:  # fmt: skip
    designs = list(dict.fromkeys(r["design"] for r in rows))
    budgets = sorted({int(a["budget"]) for a in agg})
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    n = max(1, len(designs))
    for k, d in enumerate(designs):
        pts = sorted((a["budget"], a[metric]) for a in agg if a["design"] == d and a[metric] is not None)
        if not pts:
            continue
        # Windows evenly spaced, one slot each (as the report page's SVG charts draw them); each design
        # dodged a little within its slot so equal values do not hide each other.
        dodge = min(0.07, 0.6 / n) * (k - (n - 1) / 2)
        xs = [budgets.index(int(x)) + dodge for x, _ in pts]
        ax.plot(xs, [y for _, y in pts], marker="o", ms=4, label=d, **style(d))
    ax.set_xticks(range(len(budgets)), [f"{b:,}" for b in budgets])
    ax.set_xlim(-0.5, len(budgets) - 0.5)
    ax.set_xlabel("provider window (tokens; one slot per window, evenly spaced)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{ylabel.split(' (')[0]} against the provider window")
    if metric == "recall":
        ax.set_ylim(-0.02, 1.05)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


#: The helper's work: set just before the fork that starts it, so the helper inherits the rows instead of
#: reading them from a pipe (a pickled sweep outgrows a pipe's buffer, and a helper stopped before reading
#: it left this process's queue thread blocked on the write, and its exit hung).
_JOB: tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]] | None = None


def _render_job() -> dict[str, bytes]:
    assert _JOB is not None, "the helper runs in a fork made while _JOB was set"
    rows, agg, names = _JOB
    return {name: render(rows, agg, name) for name in names}


class Plotter:
    """The plots of one sweep, drawn here or, with *workers* > 1, partly in a forked helper process while
    this one writes the tables (:func:`sim.bench_outputs.write_outputs`).

    :meth:`start` hands :data:`AWAY` to the helper, a fork of this process made at once (it inherits the
    rows and the warmed-up matplotlib, and sends back only PNG bytes); :meth:`finish` draws the
    rest here and collects the helper's. Without a safe fork (another thread running, not Linux: see
    :func:`sim.pool.executor`) or with one worker, everything is drawn here, in order. The bytes are the
    same either way. On an error or Ctrl-C the helper is stopped at once (:meth:`stop`)."""

    def __init__(self, rows: list[dict[str, Any]], agg: list[dict[str, Any]], workers: int = 1) -> None:
        self.rows, self.agg, self.workers = rows, agg, workers
        self.available = _pyplot() is not None
        self._future: Any = None
        self._pool: Any = None
        self._here = list(PLOTS)

    def start(self) -> None:
        """Start the helper (with *workers* > 1 and a safe fork)."""
        if not self.available or self.workers < 2 or not self.rows:
            return
        from sim import pool as procs

        ex = procs.executor(1, fork=True)
        if not procs.forks(ex):  # a fresh interpreter would spend longer importing than it saves
            ex.shutdown(wait=False)
            return
        global _JOB
        away = [AWAY]
        self._pool = ex
        _JOB = (self.rows, self.agg, away)
        try:
            with procs.forking(ex), procs.quiet_children():
                self._future = ex.submit(_render_job)  # forks here: the helper has _JOB
        finally:
            _JOB = None
        self._here = [n for n in PLOTS if n not in away]

    def finish(self, out: Path, outputs: Outputs) -> list[Path]:
        """Stage every plot under *out* in :data:`PLOTS` order; their paths (none without matplotlib)."""
        if not self.available:
            sys.stderr.write("plots skipped: install the plot extra (pip install 'memsim[plot]')\n")
            return []
        images = {n: render(self.rows, self.agg, n) for n in self._here}
        if self._future is not None:
            images.update(self._future.result())
            self._pool.shutdown(wait=True)
            self._future = self._pool = None
        return [outputs.write_bytes(out / n, images[n]) for n in PLOTS]

    def stop(self) -> None:
        """Stop the helper now, if one runs (an error or Ctrl-C in this process)."""
        if self._pool is not None:
            from sim import pool as procs

            procs.terminate(self._pool)
            self._future = self._pool = None
