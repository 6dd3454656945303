"""Regenerate what memsim's docs generate: README's blocks, and with --claims the ci ledger page.

python dev/gendocs.py            # README.md blocks (designs, counts, scenarios, CLI synopsis)
python dev/gendocs.py --claims   # also docs/claims.md (runs `memsim claims --profile ci`)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sim.readme import update_readme

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    readme = ROOT / "README.md"
    text = update_readme(readme.read_text(encoding="utf-8"))
    readme.write_text(text, encoding="utf-8")
    print(f"wrote {readme}")
    if "--claims" in sys.argv:
        md = str(ROOT / "docs" / "claims.md")
        cmd = [
            sys.executable,
            "-m",
            "sim.cli",
            "claims",
            "--profile",
            "ci",
            "--workers",
            "2",
            "--markdown",
            md,
        ]
        raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


if __name__ == "__main__":
    main()
