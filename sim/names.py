"""Names no design may take: the one place that reserves them.

The benchmarks run baselines beside the designs under fixed labels: the fact benchmark's ``oracle``
(:mod:`sim.bench.oracle`) and the conversation benchmark's ``oracle``, ``oracle-sessions`` and ``full``
(:mod:`sim.conversations.baselines`). A design registered under one of these labels would be run as the
baseline, or twice, and counted twice in the aggregate: a silent wrong result (issue 37). The registry
(:func:`sim.registry.designs`) skips a plugin that takes one, as it skips any broken plugin, and
``memsim new design`` refuses them. Another reserved label is added here, nowhere else.
"""

from __future__ import annotations

#: Labels of the baselines the benchmarks run beside the designs.
BASELINE_NAMES = ("oracle", "oracle-sessions", "full")

#: Every name a design may not take.
RESERVED_DESIGN_NAMES = frozenset(BASELINE_NAMES)


def reserved_reason(name: str) -> str | None:
    """Why *name* cannot name a design (None when it can)."""
    if name in RESERVED_DESIGN_NAMES:
        return f"{name!r} is reserved: it is the label of a benchmark baseline ({', '.join(BASELINE_NAMES)})"
    return None
