"""Where a claim's scope is declared: ``SCOPES`` in its design's drivers, keyed by claim id.

A design package with a ``drivers`` package declares them in ``drivers/scopes.py``; one with a ``drivers``
module (the scaffold's) declares ``SCOPES`` in that module. Keys are claim ids with or without the
``<design>.`` prefix. Nothing in the claim declarations changes: a new claim adds one entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from sim.errors import UsageError
from sim.exhaustive.scope import Scope


def declared(system: str) -> dict[str, Scope]:
    """The scopes *system*'s drivers declare, by full claim id (empty when it declares none)."""
    from sim.registry import design

    pkg = design(system).package
    table: Any = None
    for name in (f"{pkg}.drivers.scopes", f"{pkg}.drivers"):
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue
            raise
        table = getattr(mod, "SCOPES", None)
        if table is not None:
            break
    if not table:
        return {}
    out: dict[str, Scope] = {}
    for key, scope in dict(table).items():
        full = key if key.startswith(f"{system}.") else f"{system}.{key}"
        if not isinstance(scope, Scope):
            raise TypeError(f"SCOPES[{key!r}] of {system} is a {type(scope).__name__}, not a Scope")
        out[full] = scope
    return out


def scope_of(claim_id: str) -> Scope:
    """The declared scope of *claim_id*; raises :class:`UsageError` when it has none."""
    system = claim_id.split(".", 1)[0]
    scope = declared(system).get(claim_id)
    if scope is None:
        raise UsageError(
            f"claim {claim_id} declares no exhaustive scope (add it to SCOPES in its design's "
            "drivers: DESIGN.md, 'Claims, four directions')"
        )
    return scope
