"""The README's worked example of the conversation benchmark, generated (``python dev/gendocs.py``), never
typed: the shipped LongMemEval sample through every installed design and the three baselines at two
windows, in this process (issue 28)."""

from __future__ import annotations

import json

#: The sample, its workload kind and the windows of the worked example.
EXAMPLE_SAMPLE = "longmemeval_s_sample.json"
EXAMPLE_KIND = "longmemeval"
EXAMPLE_BUDGETS = (1_000, 8_000)


def example_rows() -> list[dict[str, object]] | None:
    """The example's question rows, or None where the loaders are not installed."""
    try:
        from sim.conversations.formats import iter_instances
        from sim.conversations.samples import sample_path
    except ImportError:
        return None
    from sim.bench.tasks import ORACLE, parse_designs
    from sim.conversations.run import baseline_specs, run_instance
    from sim.registry import is_reference, registered_by

    # README describes what memsim ships, whatever plugin designs are installed beside it; the reference
    # designs have their own page (docs/reference-designs.md, issue 39).
    own = [
        s for s in parse_designs(None)
        if s.design != ORACLE and registered_by(s.design) == "memsim" and not is_reference(s.design)
    ]  # fmt: skip
    specs = own + baseline_specs()
    rows: list[dict[str, object]] = []
    for inst in iter_instances(EXAMPLE_KIND, sample_path(EXAMPLE_SAMPLE)):
        for s in specs:
            rows += run_instance(inst, s, EXAMPLE_BUDGETS)
    return rows


def readme_example() -> str | None:
    """The worked example as Markdown: the command, then per design and window the scored questions, the
    recalls (window enforced, then as built), tokens, the lost evidence turns by reason and the answer
    diagnostic. None where the loaders are not installed."""
    from sim.conversations.metrics import aggregate

    rows = example_rows()
    if rows is None:
        return None
    agg = [a for a in aggregate(rows) if a["question_type"] == "all"]  # type: ignore[arg-type]
    why: dict[tuple[str, int], dict[str, int]] = {}
    for r in rows:
        for _tid, reason in json.loads(str(r["lost"])):
            code = str(reason).split("@", 1)[0]
            bucket = why.setdefault((str(r["design"]), int(str(r["budget"]))), {})
            bucket[code] = bucket.get(code, 0) + 1
    n_q = len({(r["instance"], r["question_id"]) for r in rows})
    windows = " and ".join(f"{b:,}" for b in EXAMPLE_BUDGETS)
    out = [
        "```",
        f"memsim bench --workload {EXAMPLE_KIND}:sim/data/samples/{EXAMPLE_SAMPLE} "
        f"--budgets {','.join(str(b) for b in EXAMPLE_BUDGETS)} --html",
        "```",
        "",
        f"{n_q} questions, windows of {windows} tokens (`aggregate.csv`, `question_type` `all`; a request "
        "over the window delivers nothing; too few instances for an interval):",
        "",
        "| design | window | scored | turn recall | session recall | turn recall if nothing enforced the "
        "window | tokens (mean) | over window | lost evidence turns (reason) "
        "| answer in context (diagnostic) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]

    def f(v: object) -> str:
        return "–" if v is None else f"{v:.2f}" if isinstance(v, float) else f"{v:,}"

    def tokens(v: object) -> str:
        return f"{float(str(v)):,.0f}"

    for a in agg:
        lost = why.get((str(a["design"]), int(a["budget"])), {})
        text = ", ".join(f"{n} {code}" for code, n in sorted(lost.items())) or "none"
        out.append(
            f"| {a['design']} | {a['budget']:,} | {a['scored']} | {f(a['evidence_recall_turn'])} | "
            f"{f(a['evidence_recall_session'])} | {f(a['evidence_recall_turn_unenforced'])} | "
            f"{tokens(a['request_tokens_mean'])} | {a['over_window_sum']} | {text} | "
            f"{f(a['answer_recall'])} |"
        )
    return "\n".join(out)
