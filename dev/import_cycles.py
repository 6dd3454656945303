"""Import cycles among the project's modules, from every import statement (issue 41).

``python dev/import_cycles.py [PACKAGE ...]`` reads each module's source with :mod:`ast` and takes every
``import`` and ``from ... import`` it contains: at module level, inside functions and classes, and under
``if TYPE_CHECKING:`` (a type-only import is still an edge a reader follows). It prints each cycle (a
strongly connected component of more than one module, or a module importing itself) as the modules in it,
and exits 1 if there is one, 0 if none. With no argument it reads ``sim``, ``systems`` and ``reference``
(those present).

``import a.b.c`` and ``from a.b import c`` are edges to the deepest project module the name resolves to
(``a.b.c`` when it is a module, else ``a.b``); importing a package also runs its ``__init__``, so an
edge to ``a.b.c`` counts as an edge to ``a.b`` and ``a`` too, as Python executes them, except the
packages the importer itself sits in (they are already loading); a statement that names the importer's
own package (``from sim import X``, X not a module) is an edge to it. :func:`cycles` is what
``tests/test_imports.py`` checks.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PACKAGES = ("sim", "systems", "reference")


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``: dotted name -> file (a package is its ``__init__``)."""
    found: dict[str, Path] = {}
    for package in packages:
        base = root / package
        if not (base / "__init__.py").is_file():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if any(not p.isidentifier() for p in parts):
                continue  # a template directory, not importable
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The deepest known module ``name`` or one of its parents is."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_names(module: str, path: Path) -> set[str]:
    """Every dotted name ``module``'s source imports (absolute; relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            # ``from a.b import c``: a.b.c when c is a module (resolved by the caller), else a.b.
            names.update(prefix if alias.name == "*" else f"{prefix}.{alias.name}" for alias in node.names)
    return names


def graph(root: Path = ROOT, packages: Iterable[str] = DEFAULT_PACKAGES) -> dict[str, set[str]]:
    """module -> the project modules it imports (with the packages whose ``__init__`` that runs)."""
    known = modules(root, packages)
    edges: dict[str, set[str]] = {}
    for module, path in known.items():
        targets: set[str] = set()
        for name in imported_names(module, path):
            target = _resolve(name, known)
            if target and target != module:
                targets.add(target)  # what the statement names, even the importer's own package
            while target:
                # Importing a.b.c runs a/__init__ and a/b/__init__ first, except the ones the importer
                # itself sits in (they are already loading when it runs).
                target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(target + "."):
                    targets.add(target)
        edges[module] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with a cycle (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(edges.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(edges.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def main(argv: list[str]) -> int:
    packages = argv or list(DEFAULT_PACKAGES)
    found = cycles(graph(ROOT, packages))
    for component in found:
        print(f"cycle ({len(component)} modules): {' '.join(component)}")
    if not found:
        print(f"no import cycles in {', '.join(packages)}")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
