"""Each MerchantBench claim's exhaustive scope (``memsim claims --exhaustive``): the values it probes.

The small windows of :mod:`~systems.merchantbench.drivers.common` put the trim and trigger thresholds in
the hundreds of characters: an observation of 738 characters is the first whose step fires the trigger T
above the tool schemas (the suffix trim then drops what came before it).
Values sit at those thresholds, at zero and at the type's bound; sequences are a few steps long.
"""

from __future__ import annotations

from typing import Any

from sim.exhaustive import Scope, derive, seq, tup, values
from systems.merchantbench.drivers import caching as cc
from systems.merchantbench.drivers import context as cx
from systems.merchantbench.drivers import documents as dd
from systems.merchantbench.drivers.documents import _ID_SAMPLES


def _k_if_used(ex: dict[str, Any]) -> Any:
    """The save policy reads k only when it saves every k steps (``SavePolicy.wants_save``)."""
    return {**ex, "k": ex["k"] if ex["save"] == "every_k" else None}


def _unordered_ids(ex: dict[str, Any]) -> Any:
    """Two agents are interchangeable: the check writes and reads both, and aliasing is symmetric."""
    return sorted([ex["a"], ex["b"]]), ex["casefold"]


SCOPES: dict[str, Scope] = {
    "suffix-eviction": derive(
        cx.SuffixExample,
        max_len=3,
        paths={"steps.*": tup(values(0, 738), values(0, 2))},
        canonical=_k_if_used,
        note="observations of 0 and 738 characters (the first to fire T)",
    ),
    "orphaned-read-result": derive(
        cx.OrphanExample,
        offset=values(0, 1, 150, 300),
        slack=values(0, 1, 100, 200),
        paths={"steps": seq(values(0, 200, 400), 1, cap=3)},
        note="B at the fixed cost plus 120 + offset",
    ),
    "large-save-empties-history": derive(
        cx.LargeSaveExample,
        max_len=1,
        keep=values(300, 360),
        write_chars=values(0, 356, 1500, 3000),
        last=values(0, 147, 150),
        paths={"prefix.*": tup(values(0, 1200), values(0, 2))},
        note="a write call of 356 characters is the first over K minus its result at K = 300",
    ),
    "no-provider-ceiling": derive(
        cx.CeilingExample,
        window=values(60, 660, 1260),
        paths={"steps.*.1": values(0, 47, 3000)},
        note="every text kind, 0 to 3,000 characters",
        deep={"window": values(60, 1260), "steps.*.1": values(47, 3000)},
        deep_note="the smallest and largest window, texts of 47 and 3,000 characters",
    ),
    "silent-slide": derive(cx.SlideExample, max_len=2),
    "reminder-lost-on-425": derive(
        cx.StaleExample,
        max_len=3,
        paths={
            "steps.*": values(
                *([size, facts, hop] for facts, hop in ((0, None), (0, 0), (1, None)) for size in (0, 800))
            )
        },
        note="steps of 0 or 800 characters: with no fact, with a 425 at the first hop, or with a fact",
        deep={"steps.*": values([0, 0, None], [800, 0, None], [0, 0, 0], [0, 1, None])},
        deep_note="the 425 and the fact on steps of 0 characters",
    ),
    "forced-eos-compacts": derive(
        cx.ForcedExample,
        max_len=3,
        paths={
            "steps.*": tup(values(0, 738), values(0, 1)),
            "faults": seq(values([0, 0, 400], [1, 0, 500]), 1, cap=2),
        },
        note="observations of 0 and 738 characters; a write failing with 400 in the first step or 500 in the "
        "second",
    ),
    "reused-call-id": derive(
        cx.ReuseExample,
        max_len=2,
        paths={"resend": seq(values(0, 1, 2, 3), 1, cap=2)},
        deep={"writes.*.1": values("alpha", "beta"), "resend": seq(values(0, 1, 2, 3), 1, cap=2)},
        deep_note="two contents (the same or another), one resend",
    ),
    "forbidden-erases-read": derive(cx.ForbiddenExample, max_len=2),
    "id-aliasing": derive(
        dd.AliasExample,
        a=values(*_ID_SAMPLES),
        b=values(*_ID_SAMPLES),
        symmetry=_unordered_ids,
        note="the id samples of the strategy (escapes, case, accents, dots)",
    ),
    "index-aliasing": derive(dd.IndexExample),
    "version-inflation": derive(
        dd.VersionExample,
        paths={"bodies.*": values("", "notes", dd.VERSION_MARKER + "9 -->")},
    ),
    "overwrite-then-append": derive(dd.TxnExample),
    "crlf-not-preserved": derive(dd.CrlfExample, content=values("", "a", "\r", "\n", "\r\n", "a\r\nb", "é")),
    "traces-not-reloaded": derive(
        cx.RecallExample,
        paths={"steps.*": tup(values(0, 738, 1500), values(0, 1))},
    ),
    "cache-prefix-reset": derive(
        cc.CacheExample,
        steps=values(2, 12, 20, 40),
        note="12 steps of 3,200 characters is the first history past the window (the trim then moves)",
    ),
}
