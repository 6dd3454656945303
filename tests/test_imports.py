"""Imports run one way (issue 41): no module imports one that imports it back, directly or through others,
counting every import statement (inside functions and under ``TYPE_CHECKING`` too); the import-linter
contracts in pyproject.toml hold; DESIGN.md's picture of the layers is the one the contracts draw."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
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


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    found = str(exe) if exe.exists() else shutil.which("lint-imports")
    assert found, "import-linter is part of the test extra"
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([found, "--no-cache"], cwd=root, env=env, capture_output=True, text=True)


def test_import_contracts_hold() -> None:
    """`lint-imports` keeps every contract of pyproject.toml's [tool.importlinter]."""
    proc = _lint_imports(ROOT)

    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_import_contracts_catch_an_upward_import(tmp_path: Path) -> None:
    """The contracts see a runner importing the command line inside a function, a model module importing
    its fixes, a service importing the client for a type, and a sim module placed in no layer."""
    for name in ("sim", "systems"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with (tmp_path / "sim" / "bench_cli.py").open("a") as fh:
        fh.write("\n\ndef _upward():\n    from sim.cli import app\n\n    return app\n")
    with (tmp_path / "systems" / "merchantbench" / "model" / "server.py").open("a") as fh:
        fh.write(
            "\n\ndef _reverse():\n    from systems.merchantbench.model import fixes\n\n    return fixes\n"
        )
    core = tmp_path / "systems" / "tracecraft" / "model" / "core.py"
    text = core.read_text(encoding="utf-8")
    core.write_text(
        text.replace(
            "if TYPE_CHECKING:\n",
            "if TYPE_CHECKING:\n    from systems.tracecraft.model.client import Client\n",
            1,
        ),
        encoding="utf-8",
    )
    (tmp_path / "sim" / "unplaced.py").write_text("")

    proc = _lint_imports(tmp_path)

    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "sim.bench_cli is not allowed to import sim.cli" in proc.stdout
    assert "systems.merchantbench.model.server is not allowed to import" in proc.stdout
    assert "systems.tracecraft.model.core is not allowed to import" in proc.stdout
    assert "- sim.unplaced" in proc.stdout
    assert "Contracts: 4 kept, 3 broken." in proc.stdout


def test_design_md_draws_the_contracts() -> None:
    """DESIGN.md's picture of the layers is the one dev/import_layers.py draws from the contracts."""
    il = _dev("import_layers")
    text = (ROOT / "DESIGN.md").read_text(encoding="utf-8")

    assert il.update(text, il.render(il.contracts())) == text
