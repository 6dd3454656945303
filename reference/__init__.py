"""memsim's reference designs: the field's own memory designs, each a documented algorithm (issue 39).

Each subpackage (``reference.window``, ``reference.summary_buffer``, and ``reference.bm25``,
``reference.pager``) is a design registered through the same ``memsim.designs`` entry points a plugin
uses, with ``kind="reference"`` (:data:`sim.registry.REFERENCE`): listings, bench outputs and pages label
it a *reference design of a documented algorithm*, not one of the four seed systems. A reference design
models the algorithm as its documentation and code define it (cited in its modules), not a deployment of
it. Design packages never import each other; what they share lives in :mod:`reference.common`.
"""
