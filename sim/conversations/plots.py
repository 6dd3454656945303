"""A conversation sweep's PNG plots (``--plots``): turn-level evidence recall and request tokens against
the window, one line per design variant and baseline, drawn as the fact-token benchmark draws its
budget plots (:mod:`sim.bench.plots`: the same colours and axes) (issue 28)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from sim.outputs import Outputs

#: The plots' file names and what each shows (the ``aggregate`` column and its axis label).
PLOTS = {
    "evidence_recall_vs_budget.png": (
        "evidence_recall_turn",
        "turn-level evidence recall (mean over questions)",
    ),
    "request_tokens_vs_budget.png": ("request_tokens_mean", "request tokens at question time (mean)"),
}


def write_plots(
    rows: list[dict[str, Any]], agg: list[dict[str, Any]], out: Path, outputs: Outputs
) -> list[Path]:
    """Stage the plots under *out* (none, with a note on stderr, without matplotlib)."""
    from sim.bench.plots import _against_budget, _pyplot

    plt = _pyplot()
    if plt is None:
        sys.stderr.write("plots skipped: install the plot extra (pip install 'memsim[plot]')\n")
        return []
    overall = [a for a in agg if a["question_type"] == "all"]
    paths = []
    for name, (metric, label) in PLOTS.items():
        fig = _against_budget(plt, rows, overall, metric, label)
        try:
            if metric == "evidence_recall_turn":
                fig.axes[0].set_ylim(-0.02, 1.05)
            fig.tight_layout()
            buf = io.BytesIO()
            fig.savefig(buf, dpi=110, format="png")
        finally:
            plt.close(fig)
        paths.append(outputs.write_bytes(out / name, buf.getvalue()))
    return paths
