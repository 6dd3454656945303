"""Exhaustive small-scope checking of claims (``memsim claims --exhaustive``).

A claim's *scope* (:mod:`sim.exhaustive.scope`) is the finite domain of each of its example fields and a
bound on sequence lengths, declared beside its strategy in the design's drivers (``SCOPES``,
:mod:`sim.exhaustive.declared`) and validated against its ``example_type``. The runner
(:mod:`sim.exhaustive.runner`, :mod:`sim.exhaustive.run`) enumerates every example of the scope in
canonical order (size, then lexicographic), so faithful's and off's first counterexample is a minimal one
within the scope and "holds" for fixed and combined means every case in it held. Symmetric and duplicate
cases are skipped where the driver declares them equivalent; runs split across processes or Dask and
resume from saved progress (:mod:`sim.exhaustive.progress`).
"""

from sim.exhaustive.derive import derive
from sim.exhaustive.scope import (
    Scope,
    ScopeError,
    alt,
    enumerate_cases,
    interchangeable,
    mapping,
    record,
    seq,
    tup,
    validate,
    values,
)

__all__ = [
    "Scope", "ScopeError", "alt", "derive", "enumerate_cases", "interchangeable", "mapping", "record", "seq",
    "tup", "validate", "values",
]  # fmt: skip
