"""Counterexample transfer: replay a saved example on a design's *real* system, where it declares one.

A design that can be installed and driven for real declares ``Design.transfer`` (``module:function``,
relative to its package): ``function(claim, direction, example) -> TransferResult``. ``memsim replay
EXAMPLE.json --real`` calls it and exits 0 when the real system shows the same failure, 1 when it does
not, and 2 when the design has no real system or it is not installed (the function says how to install
it by raising :class:`~sim.errors.UsageError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sim.errors import UsageError


@dataclass(frozen=True)
class TransferResult:
    """What the real system did with an example."""

    reproduced: bool
    detail: str
    system: str = ""  # the real system and version, e.g. "package 1.2.3"


def transfer_cli(path: Path, *, variant: str | None) -> bool:
    """``memsim replay EXAMPLE.json --real``: True when the real system reproduces the example."""
    from sim import replay as rp
    from sim.limits import decode_text, read_bounded
    from sim.registry import design

    text = decode_text(read_bounded(path, "saved example"), "saved example", path)
    claim, saved_variant, example = rp.load_example(text, str(path))
    d = design(claim.system)
    if not d.transfer:
        raise UsageError(f"design {d.name} declares no real system to transfer examples to")
    fn = d._resolve(d.transfer)
    result = fn(claim, variant or saved_variant, example)
    where = f" on {result.system}" if result.system else ""
    print(f"{claim.id}{where}: {'REPRODUCED' if result.reproduced else 'NOT reproduced'}: {result.detail}")
    return bool(result.reproduced)
