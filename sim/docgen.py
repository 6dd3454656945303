"""``memsim doc``: documentation generated from the registries, so it cannot drift from the code."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from sim import faults
from sim.errors import UsageError
from sim.fidelity import Deviation, coverage, deviations, fidelity_module
from sim.registry import Design, design, designs

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
            out.append(f"{d.name}: {d.title}\n  report: {d.report.title} ({d.report.path or 'not shipped'})")
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
        from sim.scenario import scenarios

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
    from sim.scenario import resolve

    if not name:
        raise UsageError("doc params needs a scenario: `memsim doc params SCENARIO|FILE.py`")
    sc = resolve(name)
    head = f"{sc.name} ({sc.system}, seed {sc.seed}): {sc.title}\nparameters (--param KEY=VALUE):"
    return "\n".join([head, *describe_fields(sc.params)])


# -- generated README blocks ------------------------------------------------------------------------
#: README's generated blocks sit between ``<!-- memsim:NAME -->`` and ``<!-- /memsim:NAME -->``.
BLOCK = "<!-- memsim:{name} -->\n{body}\n<!-- /memsim:{name} -->"


def _synopsis() -> str:
    """``memsim COMMAND`` usage lines, generated from the CLI itself."""
    import typer.main

    from sim.cli import app

    group = typer.main.get_command(app)
    lines = []

    def walk(cmd: Any, prefix: str) -> None:
        if hasattr(cmd, "list_commands"):  # a group (typer may vendor its own click)
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), f"{prefix} {name}")
            return
        parts = [prefix]
        for p in cmd.params:
            if p.param_type_name == "argument":
                parts.append(p.metavar or p.human_readable_name)
        for p in cmd.params:
            if p.param_type_name == "option" and p.name != "help":
                flag = max(p.opts, key=len)
                if p.is_flag:
                    parts.append(f"[{flag}]" if not p.secondary_opts else f"[{flag}/{p.secondary_opts[0]}]")
                else:
                    parts.append(f"[{flag} {p.metavar or p.name.upper()}]")
        lines.append(" ".join(parts))

    walk(group, "memsim")
    lines.insert(0, "memsim --version")
    return "```\n" + "\n".join(lines) + "\n```"


def _shipped() -> list[Design]:
    """memsim's own designs: README describes what memsim ships, whatever plugins are installed beside it."""
    from sim.registry import registered_by

    return [d for d in designs().values() if registered_by(d.name) == "memsim"]


def _counts() -> str:
    from sim import claims as cl

    per = [(d.name, len(cl.registry(d.name))) for d in _shipped()]
    total = sum(n for _, n in per)
    return f"{total} claims in {len(per)} designs: " + ", ".join(f"{name} {n}" for name, n in per)


def _scenario_table() -> str:
    from sim.scenario import scenarios

    rows = ["| scenario | design | what it shows |", "|---|---|---|"]
    shipped = {d.name for d in _shipped()}
    for sc in scenarios().values():
        if sc.system in shipped:
            rows.append(f"| `{sc.name}` | {sc.system} | {sc.title.replace('|', '/')} |")
    return "\n".join(rows)


def _design_table() -> str:
    rows = ["| design | what is modeled | report |", "|---|---|---|"]
    for d in _shipped():
        report = f"[{d.report.title}]({d.report.path})" if d.report.path else d.report.title
        rows.append(f"| **{d.name}** | {d.title} | {report} |")
    return "\n".join(rows)


def readme_blocks() -> dict[str, str]:
    """The README's generated blocks, by name."""
    from sim.conversations.example import readme_example

    blocks = {
        "designs": _design_table(),
        "counts": _counts(),
        "scenarios": _scenario_table(),
        "synopsis": _synopsis(),
    }
    conversations = readme_example()  # None until the conversation loaders are installed
    if conversations is not None:
        blocks["conversations"] = conversations
    return blocks


def update_readme(text: str) -> str:
    """*text* (README.md) with every generated block replaced by its current content."""
    import re

    for name, body in readme_blocks().items():
        pattern = re.compile(rf"<!-- memsim:{name} -->\n(?:.*?\n)?<!-- /memsim:{name} -->", re.DOTALL)
        if not pattern.search(text):
            raise ValueError(f"README has no generated block {name!r}")
        block = BLOCK.format(name=name, body=body)
        text = pattern.sub(lambda _m: block, text)  # noqa: B023 - used at once, inside this iteration
    return text
