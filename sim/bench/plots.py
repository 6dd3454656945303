"""The sweep's PNG plots, with one stable colour per design label whatever else a run includes."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from sim.outputs import Outputs

#: Colours for designs that declare none (``Design.colour``), by a stable hash of the design's name.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C564B", "#BCBD22",
           "#17BECF", "#9467BD")  # fmt: skip
ORACLE_COLOUR = "#444444"


def colour(label: str) -> str:
    """The colour of a design label: its design's declared colour (or one from its name), the same in
    every run, plot and report whatever other designs run beside it; variants share it and draw dashed."""
    if label == "oracle":
        return ORACLE_COLOUR
    base = label.split(":", 1)[0]
    from sim.registry import designs

    declared = designs().get(base)
    if declared is not None and declared.colour:
        return declared.colour
    return PALETTE[int(hashlib.sha256(base.encode()).hexdigest(), 16) % len(PALETTE)]


def style(label: str) -> dict[str, Any]:
    """Colour and line style: variants of a design share its hue family but draw dashed."""
    return {"color": colour(label), "ls": "--" if ":" in label else "-"}


def _saver(fig: Any) -> Any:
    def save(path: Path) -> None:
        fig.savefig(path, dpi=110, format="png")

    return save


def preload() -> None:
    """Import matplotlib (Agg) now, if it is installed: a third of a second that ``memsim bench
    --workers N`` spends while its last worker finishes instead of after (``run_sweep(idle=...)``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot
    except ImportError:
        pass  # plot() says so, once


def plot(rows: list[dict[str, Any]], agg: list[dict[str, Any]], out: Path, outputs: Outputs) -> list[Path]:
    """Stage the plots: tokens per request over time, recall and overflow against budget."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plots skipped: install the plot extra (pip install 'memsim[plot]')\n")
        return []
    paths = []
    budgets = sorted({r["budget"] for r in rows})
    designs = list(dict.fromkeys(r["design"] for r in rows))
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
    fig.tight_layout()
    paths.append(outputs.write_with(out / "tokens_over_time.png", _saver(fig)))
    plt.close(fig)
    for metric, ylabel, fname in (
        ("recall", "probe recall (mean over seeds)", "recall_vs_budget.png"),
        ("over_window_sum", "requests over the window (sum over seeds)", "overflow_vs_budget.png"),
    ):
        fig, ax = plt.subplots(figsize=(8.5, 4.5))
        n = max(1, len(designs))
        for k, d in enumerate(designs):
            pts = sorted((a["budget"], a[metric]) for a in agg if a["design"] == d and a[metric] is not None)
            if not pts:
                continue
            # Dodge each design a little along the (log) x axis so equal values do not hide each other.
            dodge = 1.0 + 0.035 * (k - (n - 1) / 2)
            ax.plot([x * dodge for x, _ in pts], [y for _, y in pts], marker="o", ms=4, label=d, **style(d))
        ax.set_xscale("log")
        ax.set_xlabel("provider window (tokens)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel.split(' (')[0]} against budget")
        if metric == "recall":
            ax.set_ylim(-0.02, 1.05)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        fig.tight_layout()
        paths.append(outputs.write_with(out / fname, _saver(fig)))
        plt.close(fig)
    return paths
