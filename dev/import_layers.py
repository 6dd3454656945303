"""DESIGN.md's picture of what may import what, drawn from the import-linter contracts (issue 41).

``python dev/import_layers.py`` rewrites the block between ``<!-- import-layers -->`` and
``<!-- /import-layers -->`` in DESIGN.md from ``[tool.importlinter]`` in pyproject.toml;
``python dev/import_layers.py --check`` exits 1 if the block differs (``tests/test_imports.py`` checks the
same). The contracts are the one source: the picture is never typed by hand.
"""

from __future__ import annotations

import re
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- import-layers -->", "<!-- /import-layers -->"
WIDTH = 110

LEGEND = (
    "Each block is a contract `lint-imports` checks (tests/test_imports.py runs it). Layers read top to "
    "bottom: a module imports only from layers below its own. `a | b`: siblings that never import each "
    "other; `a : b`: siblings that may; `(x)`: a layer only some containers have."
)


def contracts(pyproject: Path = ROOT / "pyproject.toml") -> list[dict[str, Any]]:
    """The contracts of ``[tool.importlinter]``, in file order."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def _row(layer: str, indent: str) -> list[str]:
    """One layer as lines (a long row of siblings wraps after a separator)."""
    sep = " : " if " : " in layer else " | "
    parts = [p.strip() for p in layer.split(sep.strip())]
    lines, line = [], indent + parts[0]
    for part in parts[1:]:
        if len(line + sep + part) > WIDTH:
            lines.append(line + sep.rstrip())
            line = " " * len(indent) + "  " + part
        else:
            line += sep + part
    return [*lines, line]


def render(items: list[dict[str, Any]]) -> str:
    """The block's text: the legend, then one picture per contract."""
    out = [*textwrap.wrap(LEGEND, width=WIDTH), "", "```"]
    for c in items:
        if out[-1] != "```":
            out.append("")
        out.append(f"[{c['id']}] {c['name']}")
        if c["type"] == "layers":
            where = ", ".join(c.get("containers", []))
            exhaustive = "; every module there has a layer" if c.get("exhaustive") else ""
            out.append(f"  in {where}{exhaustive}:")
            for i, layer in enumerate(c["layers"]):
                out += _row(layer, "    " if i == 0 else "  \u2193 ")
        elif c["type"] == "forbidden":
            out.append(
                f"  {', '.join(c['source_modules'])} never imports {', '.join(c['forbidden_modules'])}"
            )
        elif c["type"] == "independence":
            out.append(f"  none of {', '.join(c['modules'])} imports another")
        else:
            out.append(f"  ({c['type']})")
    out.append("```")
    return "\n".join(out)


def update(text: str, block: str) -> str:
    """*text* (DESIGN.md) with its block replaced by *block*."""
    pattern = re.compile(rf"{re.escape(START)}\n.*?{re.escape(END)}", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"DESIGN.md has no {START} ... {END} block")
    return pattern.sub(lambda _m: f"{START}\n{block}\n{END}", text)


def main(argv: list[str]) -> int:
    design = ROOT / "DESIGN.md"
    text = design.read_text(encoding="utf-8")
    new = update(text, render(contracts()))
    if "--check" in argv:
        if new != text:
            print("DESIGN.md's import layers differ from pyproject.toml: run python dev/import_layers.py")
            return 1
        return 0
    design.write_text(new, encoding="utf-8")
    print(f"wrote {design}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
