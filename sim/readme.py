"""README's generated blocks (designs, claim counts, scenarios, the CLI synopsis, the conversation example):
``python dev/gendocs.py`` writes them and ``tests/test_readme.py`` checks them. The synopsis is read from the
command line itself, so this module sits above :mod:`sim.cli` (moved out of :mod:`sim.docgen`, which the
command line calls, in issue 41)."""

from __future__ import annotations

from typing import Any

from sim.registry import Design, designs

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
    """memsim's own seed designs: README describes what memsim ships, whatever plugins are installed beside
    it; its reference designs (``kind="reference"``) have their own section and page (issue 39)."""
    from sim.registry import REFERENCE, registered_by

    return [d for d in designs().values() if registered_by(d.name) == "memsim" and d.kind != REFERENCE]


def _counts() -> str:
    from sim import claims as cl

    per = [(d.name, len(cl.registry(d.name))) for d in _shipped()]
    total = sum(n for _, n in per)
    return f"{total} claims in {len(per)} designs: " + ", ".join(f"{name} {n}" for name, n in per)


def _scenario_table() -> str:
    from sim.scenario_core import scenarios

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
