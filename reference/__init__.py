"""Reference designs: the field's own memory designs, each a documented algorithm rather than one
product's code, registered through the ``memsim.designs`` entry points exactly as a plugin is (issue 39).

They sit beside the four seed systems (``systems/``) as baselines a researcher can publish against:
``bm25`` (retrieval over past turns or sessions with Okapi BM25, as LongMemEval's retrieval study) and
``pager`` (a MemGPT/Letta-style core block, FIFO queue and searchable recall store). ``sim`` never
imports this package; its designs never import each other.
"""
