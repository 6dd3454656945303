"""Imports run one way (issue 41): no module imports one that imports it back, directly or through others,
counting every import statement (inside functions and under ``TYPE_CHECKING`` too); the import-linter
contracts in pyproject.toml hold; DESIGN.md's picture of the layers is the one the contracts draw."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _dev(name: str):
    spec = importlib.util.spec_from_file_location(f"_dev_{name}", ROOT / "dev" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_cycle_finder_sees_a_type_only_cycle(tmp_path: Path) -> None:
    """The finder counts imports inside functions and under TYPE_CHECKING, and relative ones."""
    ic = _dev("import_cycles")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (pkg / "c.py").write_text("from pkg import a\n")

    assert ic.cycles(ic.graph(tmp_path, ["pkg"])) == [["pkg.a", "pkg.b"]]


def test_no_import_cycles() -> None:
    """No module of sim/, systems/ (or reference/) imports one that imports it back."""
    ic = _dev("import_cycles")

    assert ic.cycles(ic.graph(ROOT, ic.DEFAULT_PACKAGES)) == []
