"""``memsim doc``: documentation generated from the registries, so it cannot drift from the code."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sim import faults
from sim.errors import UsageError
from sim.fidelity import Deviation, coverage, deviations, fidelity_module
from sim.registry import REFERENCE, REFERENCE_LABEL, Design, design, designs

TOPICS = ("systems", "operations", "faults", "claims", "scenarios", "coverage", "fidelity", "params", "knobs")


def _designs(system: str | None) -> list[Design]:
    return [design(system)] if system is not None else list(designs().values())


def describe_fields(model: type[BaseModel]) -> list[str]:
    """One line per field of a pydantic model: name, type, default, bounds and help."""
    out = []
    for name, f in model.model_fields.items():
        ann = f.annotation
        type_name = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
        bounds = []
        for m in f.metadata:
            for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                v = getattr(m, attr, None)
                if v is not None:
                    bounds.append(f"{sym} {v:,}" if isinstance(v, int) else f"{sym} {v}")
            max_len = getattr(m, "max_length", None)
            if max_len is not None:
                bounds.append(f"at most {max_len:,} items")
        default: Any = f.default if f.default_factory is None else f.default_factory()  # type: ignore[call-arg]
        line = f"  {name}: {type_name} = {default!r}"
        if bounds:
            line += f"  ({', '.join(bounds)})"
        if f.description:
            line += f"\n      {f.description}"
        out.append(line)
    return out or ["  (no parameters)"]


def render(topic: str, system: str | None = None, name: str | None = None) -> str:
    """The documentation page *topic* (*name*: the scenario of ``params``)."""
    from sim import claims as cl

    if topic not in TOPICS:
        raise UsageError(f"unknown doc topic {topic!r}: expected one of {', '.join(TOPICS)}")
    if topic == "params":
        return _params(name)
    if name is not None:
        raise UsageError(f"doc {topic} takes no name (only `memsim doc params SCENARIO` does)")
    chosen = _designs(system)
    out: list[str] = []
    if topic == "systems":
        for d in chosen:
            fid = fidelity_module(d.name)
            report = d.report.path or "not shipped"
            kind = f"[{REFERENCE_LABEL}] " if d.kind == REFERENCE else ""
            out.append(f"{d.name}: {kind}{d.title}\n  report: {d.report.title} ({report})")
            out.append(
                f"  operations: {len(getattr(fid, 'OPERATIONS', []))}; claims: {len(cl.registry(d.name))}; "
                f"fixes: {len(d.switches.fixes)}; not modeled: {len(getattr(fid, 'NOT_MODELED', []))}"
            )
    elif topic == "operations":
        for d in chosen:
            out.append(f"## {d.name}")
            for op in getattr(fidelity_module(d.name), "OPERATIONS", []):
                out.append(f"  {op.name}  [{', '.join(op.records)}]\n      {op.summary}")
    elif topic == "faults":
        out.append(
            "Fault kinds (the closed set): crash@POINT[#N], fail@POINT[#N], skew:AGENT=SECONDS, "
            "drift:AGENT=RATE, second-reader:AGENT"
        )
        for d in chosen:
            d.load_faults()
            pts = faults.points(d.name)
            if pts:
                out.append(f"## {d.name} fault points")
                out.extend(f"  {k}\n      {v}" for k, v in pts.items())
    elif topic == "claims":
        for d in chosen:
            for c in cl.registry(d.name).values():
                line = f"{c.id}  [{', '.join(c.records)}]\n  claim: {c.statement}\n  fix:   {c.fix}"
                if c.off:
                    line += f"\n  off:   {', '.join(c.off)}"
                if c.counterfactual:
                    line += f"\n  counterfactual design: {', '.join(c.counterfactuals)} (not upstream's)"
                if c.intent:
                    line += f"\n  upstream intends this: {c.intent}"
                out.append(line)
    elif topic == "scenarios":
        from sim.scenario_core import scenarios

        for sc in scenarios().values():
            if system is None or sc.system == system:
                out.append(f"{sc.name} ({sc.system}, seed {sc.seed}): {sc.title}")
    elif topic == "knobs":
        for d in chosen:
            out.append(f"## {d.name} (--knob {d.name}.KEY=VALUE)")
            out.extend(describe_fields(d.knobs))
    elif topic == "fidelity":
        out.extend(_fidelity(chosen))
    else:  # coverage
        missing = 0
        for d in chosen:
            out.append(f"## {d.name} ({d.report.title}, {d.report.path or 'not shipped'})")
            for rid, cov in coverage(d.name):
                if cov is None or not cov.covered:
                    missing += 1
                    out.append(f"  {rid}: UNCOVERED")
                elif cov.not_modeled:
                    out.append(f"  {rid}: Not modeled: {cov.not_modeled}")
                else:
                    out.append(f"  {rid}: {', '.join(cov.elements)}  (tests: {', '.join(cov.tests)})")
            for line in getattr(fidelity_module(d.name), "NOT_MODELED", []):
                out.append(f"  Not modeled: {line}")
        out.append(f"{missing} record IDs uncovered")
    return "\n".join(out)


def _wrap(label: str, text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(
        " ".join(text.split()), 110, initial_indent=f"      {label:<9} ", subsequent_indent=" " * 16
    ) or [f"      {label}"]


def _bullet(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(" ".join(text.split()), 110, initial_indent="  - ", subsequent_indent="    ")


def _deviation(dev: Deviation) -> list[str]:
    lines = [f"  [{dev.kind}] {dev.name}"]
    for label, text in (("upstream:", dev.upstream), ("memsim:", dev.memsim), ("why:", dev.why)):
        lines.extend(_wrap(label, text))
    lines.extend(_wrap("effect:", dev.effect))
    if dev.tokens is not None:
        now = dev.measured_tokens()
        now = now if now is not None else 0
        verdict = "equal" if now == dev.tokens else f"OFF BY {now - dev.tokens:+d}"
        counts = f"upstream {dev.tokens:,}, memsim {now:,}"
        lines.append(f"      tokens:   {counts} (cl100k; counted now: {verdict})")
    return lines


def _fidelity(chosen: list[Design]) -> list[str]:
    """``memsim doc fidelity``: per design, every remaining deviation from upstream (upstream's behaviour,
    memsim's, why, the measured effect), then the simplifications, the record IDs left out and where the
    fidelity note and the report differ."""
    out: list[str] = []
    total = 0
    for d in chosen:
        mod = fidelity_module(d.name)
        devs = deviations(d.name)
        kinds = {k: sum(1 for x in devs if x.kind == k) for k in ("behaviour", "wording", "not modeled")}
        not_modeled = list(getattr(mod, "NOT_MODELED", []))
        out.append(f"## {d.name} ({d.report.title}, {d.report.path})")
        out.append(
            f"Deviations from upstream: {len(devs)} ({kinds['behaviour']} behaviour, {kinds['wording']} "
            f"wording, {kinds['not modeled']} not modeled)"
        )
        for dev in devs:
            out.extend(_deviation(dev))
        out.append(f"Other simplifications (Not modeled): {len(not_modeled)}")
        out.extend(line for text in not_modeled for line in _bullet(text))
        left_out = [(rid, c.not_modeled) for rid, c in coverage(d.name) if c is not None and c.not_modeled]
        if left_out:
            out.append(f"Record IDs not modeled: {len(left_out)}")
            out.extend(f"  {rid}: {why}" for rid, why in left_out)
        notes = list(getattr(mod, "DIFFERENCES", []))
        if notes:
            out.append(f"Where the fidelity note and the report differ (the note wins): {len(notes)}")
            out.extend(line for text in notes for line in _bullet(text))
        out.append("")
        total += len(devs) + len(not_modeled)
    out.append(f"{total} deviations and simplifications in {len(chosen)} designs")
    return out


def _params(name: str | None) -> str:
    from sim.scenario_core import resolve

    if not name:
        raise UsageError("doc params needs a scenario: `memsim doc params SCENARIO|FILE.py`")
    sc = resolve(name)
    head = f"{sc.name} ({sc.system}, seed {sc.seed}): {sc.title}\nparameters (--param KEY=VALUE):"
    return "\n".join([head, *describe_fields(sc.params)])
