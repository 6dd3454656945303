"""The four modeled designs, one package each with the same file set (read them side by side).

Every ``systems/<name>/`` has: ``__init__.py`` (exports only: the public pure functions),
``state.py`` (frozen value records), ``model.py`` (operations named in the source system's own
vocabulary, each citing its report record IDs), ``faults.py`` (declared fault points), ``policies.py``
(seeded model stand-ins), ``properties.py`` (pure checkers over the trace, returning verdicts),
``claims.py`` (the failure modes with their fixed variants, as ``CLAIMS``), ``adapter.py`` (the
context-budget benchmark adapter) and ``fidelity.py`` (``OPERATIONS``, ``NOT_MODELED`` and the
record-coverage table ``RECORDS``).
"""

SYSTEMS = ("merchantbench", "nemsy", "rsiagent", "tracecraft")
