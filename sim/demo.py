"""``memsim demo``: every design on the embedded defaults, end to end."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sim.scenario import execute, scenarios


def run(out: Path | None) -> None:
    """Run the scenarios, a quick claims table and the small benchmark; print where outputs went."""
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="memsim-demo-")
        out = Path(tmp)
    out.mkdir(parents=True, exist_ok=True)
    print(f"memsim demo: outputs in {out}")
    for sc in scenarios().values():
        if getattr(sc.module, "DEMO", True) is False:
            continue
        print(f"\n== scenario {sc.name} ({sc.system}): {sc.title}")
        for line in execute(sc.name, trace_path=out / "traces" / f"{sc.name}.db", store="moto"
                            if sc.system == "tracecraft" else "memory"):
            print("  " + line)
    print(f"\ntraces: {out / 'traces'}")
