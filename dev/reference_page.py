"""Write docs/reference-designs.md: the four seed designs and the reference designs side by side on
LoCoMo- and LongMemEval-shaped workloads (issue 39).

    python dev/reference_page.py            # the synthetic files and the shipped samples
    MEMSIM_LOCOMO_FILE=/path/locomo10.json python dev/reference_page.py   # also the real LoCoMo file

Every installed design runs (whatever registers it: the seed designs, the reference designs, a plugin),
beside the conversation benchmark's three baselines, through :func:`sim.conversations.run.run_conversations`
(the same path as ``memsim bench --workload KIND:FILE``). The tables show every column the aggregate has:
evidence recall within the window, and any retrieval metric a design reports (``recall_any@K``, ...),
then tokens and dollars per question. Nothing here is timed, so the page is the same on every machine.
Only aggregate numbers of the real LoCoMo file are written, never any of its text.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "reference-designs.md"
BUDGETS = (8_000, 32_000)
#: The shipped samples are small (a few thousand tokens a conversation): smaller windows tell designs apart.
SAMPLE_BUDGETS = (1_000, 4_000)
#: The synthetic workloads (short name, title, kind, synth arguments) and samples (short, title, kind, file).
SYNTH = (
    ("LME_S synth",
     "LongMemEval_S-shaped (synthetic, 24 instances of 48 sessions x 10 turns, ~112k tokens each)",
     "longmemeval", {"instances": 24, "sessions": 48, "turns": 10, "seed": 0}),
    ("LoCoMo synth", "LoCoMo-shaped (synthetic, 4 conversations of 24 sessions x 24 turns)",
     "locomo", {"instances": 4, "sessions": 24, "turns": 24, "seed": 0}),
)  # fmt: skip
SAMPLES = (
    ("LME sample", "the shipped LongMemEval sample (sim/data/samples/longmemeval_s_sample.json)",
     "longmemeval", "longmemeval_s_sample.json"),
    ("LoCoMo sample", "the shipped LoCoMo sample (sim/data/samples/locomo_sample.json)", "locomo",
     "locomo_sample.json"),
)  # fmt: skip

#: Aggregate keys shown in fixed columns (or not at all); any other numeric key is a metric column.
BASE = {
    "design", "budget", "question_type", "questions", "evidence_recall_turn", "evidence_recall_session",
    "answer_recall", "request_tokens_mean", "request_tokens_max", "over_window_sum", "lost_turns",
}  # fmt: skip


def kind_of(design: str) -> str:
    """``seed``, ``reference`` or ``plugin`` for an installed design; ``baseline`` otherwise."""
    from sim.registry import designs, registered_by

    d = designs().get(design.partition(":")[0])
    if d is None:
        return "baseline"
    if d.kind == "reference":
        return "reference"
    return "seed" if registered_by(d.name) == "memsim" else "plugin"


def metric_columns(agg: list[dict[str, Any]]) -> list[str]:
    """The aggregate's extra metric columns (retrieval metrics a design reports), in first-seen order."""
    out: dict[str, None] = {}
    for a in agg:
        for k, v in a.items():
            if k not in BASE and (v is None or isinstance(v, int | float)) and not isinstance(v, bool):
                out.setdefault(k, None)
    return list(out)


def _num(v: Any, digits: int = 2) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return f"{v:,}"


def table(agg: list[dict[str, Any]]) -> str:
    """One Markdown table of the overall rows (``question_type`` ``all``), window by window."""
    from sim.cache.prices import PRICES

    usd = PRICES["anthropic"].input_usd_per_mtok
    extra = metric_columns(agg)
    head = ["design", "kind", "window", "turn recall", "session recall", "answer in context", *extra,
            "tokens / question", "$ / question", "over window"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    rows = [a for a in agg if a["question_type"] == "all"]
    order = {"seed": 0, "reference": 1, "plugin": 2, "baseline": 3}
    rows.sort(key=lambda a: (a["budget"], order[kind_of(str(a["design"]))], str(a["design"])))
    for a in rows:
        tokens = float(a["request_tokens_mean"])
        cells = [f"**{a['design']}**" if kind_of(str(a["design"])) == "reference" else str(a["design"]),
                 kind_of(str(a["design"])), f"{a['budget']:,}", _num(a["evidence_recall_turn"]),
                 _num(a["evidence_recall_session"]), _num(a["answer_recall"]),
                 *(_num(a.get(k), 3) for k in extra),
                 f"{tokens:,.0f}", f"{tokens * usd / 1e6:.4f}",
                 f"{a['over_window_sum']}/{a['questions']}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(kind: str, path: str, budgets: tuple[int, ...] = BUDGETS) -> tuple[int, list[dict[str, Any]]]:
    """Every installed design and the baselines on one workload file at *budgets*: (questions, aggregate)."""
    from sim.bench.tasks import parse_designs
    from sim.conversations.metrics import aggregate
    from sim.conversations.run import run_conversations

    rows = run_conversations(parse_designs(None), list(budgets), kind, path)
    return len({(r["instance"], r["question_id"]) for r in rows}), aggregate(rows)


def section(title: str, n: int, agg: list[dict[str, Any]]) -> str:
    """The section of one workload file."""
    budgets = sorted({int(a["budget"]) for a in agg})
    windows = ", ".join(f"{b:,}" for b in budgets)
    return f"### {title}\n\n{n:,} questions, windows of {windows} tokens.\n\n{table(agg)}\n"


def glance(results: list[tuple[str, list[dict[str, Any]]]]) -> str:
    """Turn recall of every design (rows) on every workload and window (columns)."""
    cols = [(short, b) for short, agg in results for b in sorted({int(a["budget"]) for a in agg})]
    recall = {(short, str(a["design"]), int(a["budget"])): a["evidence_recall_turn"]
              for short, agg in results for a in agg if a["question_type"] == "all"}  # fmt: skip
    order = {"seed": 0, "reference": 1, "plugin": 2, "baseline": 3}
    names = sorted({d for _s, d, _b in recall}, key=lambda d: (order[kind_of(d)], d))
    lines = ["| design | kind | " + " | ".join(f"{s} @ {b // 1000}k" for s, b in cols) + " |",
             "|---|---|" + "---:|" * len(cols)]  # fmt: skip
    for d in names:
        shown = f"**{d}**" if kind_of(d) == "reference" else d
        lines.append(
            f"| {shown} | {kind_of(d)} | " + " | ".join(_num(recall.get((s, d, b))) for s, b in cols) + " |"
        )
    return "\n".join(lines)


INTRO = """# The seed designs beside the field's own designs

Generated by `python dev/reference_page.py` (issue 39); do not edit by hand.

memsim's four seed designs model real systems (MerchantBench, Nemsy, RSIAgent, Tracecraft). The
**reference designs** are the field's own memory designs, each a documented algorithm registered as a
plugin is (`kind="reference"`): `window` is LangChain's `trim_messages` with strategy "last" (the
most-recent-turns baseline), `summary-buffer` LangChain's `ConversationSummaryBufferMemory` with a seeded
summary stand-in, `bm25` Okapi BM25 retrieval over past turns (rank-bm25, as LongMemEval's retrieval
study) and `pager` a MemGPT/Letta-style core block, FIFO queue and searchable recall store; a design
that ranks also reports LongMemEval's retrieval metrics. Baselines read the evidence labels and are
bounds, not designs.

Every design gets the same request budget (the window) and is scored on what reached the model at
question time (docs/conversations.md): **turn recall** is the share of a question's evidence turns whose
whole text is in the request, **session recall** the share of its evidence sessions with a turn there,
**answer in context** whether the gold answer occurs verbatim in the request (a diagnostic, biased low
where gold answers are paraphrases). A request over the window delivers nothing (a provider refuses it):
its evidence scores 0, and the `*_unenforced` columns give the figure as built. Retrieval
columns, where present, are the design's own ranking scored as LongMemEval's retrieval evaluation scores
it. **Tokens / question** is the mean exact cl100k count of a question's request, and **$ / question** that
count at Claude Opus 4.8's uncached input list price ($5 per million tokens, sim/cache/prices.py; output
and prompt caching not priced). **Over window** counts requests the design built larger than the window
(each scored 0). Intervals (`_lo`, `_hi`) are 95% bootstrap intervals resampled by instance.

Reproduce a table with `memsim workload synth KIND --out FILE ...` (arguments in each heading) and
`memsim bench --workload KIND:FILE --budgets 8000,32000` (the shipped samples: `--budgets 1000,4000`).
"""


def build(locomo: str | None = None) -> str:
    """The whole page (with the real LoCoMo file's aggregate numbers when *locomo* names it)."""
    from sim.conversations.samples import sample_path
    from sim.conversations.synth import write

    results: list[tuple[str, list[dict[str, Any]]]] = []
    body = ["## Synthetic files of the released shapes\n"]
    with tempfile.TemporaryDirectory() as tmp:
        for short, title, kind, args in SYNTH:
            path = Path(tmp) / f"{kind}.json"
            with open(path, "wb") as fh:
                write(kind, fh, instances=args["instances"], sessions=args["sessions"], turns=args["turns"],
                      seed=args["seed"])  # fmt: skip
            cmd = " ".join(f"--{k} {v}" for k, v in args.items())
            n, agg = run(kind, str(path))
            results.append((short, agg))
            body.append(section(f"{title}: `memsim workload synth {kind} {cmd}`", n, agg))
    body.append("## The shipped samples\n")
    for short, title, kind, name in SAMPLES:
        n, agg = run(kind, str(sample_path(name)), SAMPLE_BUDGETS)
        results.append((short, agg))
        body.append(section(title, n, agg))
    if locomo:
        body.append(
            "## The real LoCoMo file\n\nlocomo10.json (CC BY-NC 4.0; not shipped: aggregate numbers only).\n"
        )
        n, agg = run("locomo", locomo)
        results.append(("LoCoMo", agg))
        body.append(section("LoCoMo (locomo10.json, 10 conversations)", n, agg))
    head = (
        "## At a glance: turn recall\n\n"
        "The share of each question's evidence turns in its request, per workload and window.\n\n"
    )
    return "\n".join([INTRO, head + glance(results) + "\n", *body])


def main() -> None:
    text = build(os.environ.get("MEMSIM_LOCOMO_FILE") or None)
    tmp = OUT.with_name(f".{OUT.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
