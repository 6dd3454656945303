"""memsim's four built-in designs, one package each with the same file set (read them side by side).

Each registers itself under the ``memsim.designs`` entry-point group (``pyproject.toml``), exactly as a
third-party design does; nothing in ``sim/`` names them. The file set (DESIGN.md, "Adding a design"):
``design.py`` (the :class:`~sim.registry.Design` declaration), ``report.json`` (the report's record IDs),
``__init__.py`` (exports only), ``state.py`` (frozen value records and switch names), ``model`` (operations
named in the source system's own vocabulary, citing record IDs), ``faults.py`` (declared fault points),
``policies.py`` (seeded model stand-ins), ``properties.py`` (pure checkers over the trace, returning
verdicts), ``claims.py`` (the failure modes as ``CLAIMS``), ``adapter.py`` (the benchmark adapter) and
``fidelity.py`` (``OPERATIONS``, ``NOT_MODELED`` and the record-coverage table ``COVERAGE``).
"""
