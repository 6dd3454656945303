"""``memsim doc``: documentation generated from the registries, so it cannot drift from the code."""

from __future__ import annotations

import importlib

from sim import claims as cl
from sim import faults
from sim.errors import UsageError
from sim.fidelity import coverage, report_records, system_module

TOPICS = ("systems", "operations", "faults", "claims", "scenarios", "coverage", "fidelity")


def _systems(system: str | None) -> list[str]:
    from systems import SYSTEMS

    if system is not None and system not in SYSTEMS:
        raise UsageError(f"unknown system {system!r}: expected one of {', '.join(SYSTEMS)}")
    return [s for s in SYSTEMS if system is None or s == system]


def render(topic: str, system: str | None = None) -> str:
    """The documentation page *topic*."""
    if topic not in TOPICS:
        raise UsageError(f"unknown doc topic {topic!r}: expected one of {', '.join(TOPICS)}")
    names = _systems(system)
    out: list[str] = []
    if topic == "systems":
        for s in names:
            mod = system_module(s, "fidelity")
            pkg = importlib.import_module(f"systems.{s}") if mod else None
            head = (
                " ".join((pkg.__doc__ or "").strip().split("\n\n")[0].split())
                if pkg and pkg.__doc__
                else "(not built yet)"
            )
            seed = report_records()[s]["seed"]
            out.append(f"{s}: {head}\n  report: {seed}")
            if mod:
                ops = getattr(mod, "OPERATIONS", [])
                out.append(
                    f"  operations: {len(ops)}; claims: {len(cl.registry(s))}; "
                    f"not modeled: {len(getattr(mod, 'NOT_MODELED', []))}"
                )
    elif topic == "operations":
        for s in names:
            mod = system_module(s, "fidelity")
            out.append(f"## {s}")
            for op in getattr(mod, "OPERATIONS", []) if mod else []:
                out.append(f"  {op.name}  [{', '.join(op.records)}]\n      {op.summary}")
    elif topic == "faults":
        out.append(
            "Fault kinds (the closed set): crash@POINT[#N], fail@POINT[#N], skew:AGENT=SECONDS, "
            "drift:AGENT=RATE, second-reader:AGENT"
        )
        for s in names:
            system_module(s, "faults")
            pts = faults.points(s)
            if pts:
                out.append(f"## {s} fault points")
                out.extend(f"  {k}\n      {v}" for k, v in pts.items())
    elif topic == "claims":
        for s in names:
            for c in cl.registry(s).values():
                out.append(f"{c.id}  [{', '.join(c.records)}]\n  claim: {c.statement}\n  fix:   {c.fix}")
    elif topic == "scenarios":
        from sim.scenario import scenarios

        for sc in scenarios().values():
            if system is None or sc.system == system:
                out.append(f"{sc.name} ({sc.system}, seed {sc.seed}): {sc.title}")
    elif topic in ("coverage", "fidelity"):
        missing = 0
        for s in names:
            out.append(f"## {s} ({report_records()[s]['seed']})")
            for rid, cov in coverage(s):
                if cov is None or not cov.covered:
                    missing += 1
                    out.append(f"  {rid}: UNCOVERED")
                elif cov.not_modeled:
                    out.append(f"  {rid}: Not modeled: {cov.not_modeled}")
                else:
                    out.append(f"  {rid}: {', '.join(cov.elements)}  (tests: {', '.join(cov.tests)})")
            mod = system_module(s, "fidelity")
            for line in getattr(mod, "NOT_MODELED", []) if mod else []:
                out.append(f"  Not modeled: {line}")
        out.append(f"{missing} record IDs uncovered")
    return "\n".join(out)
