"""``pager``: a MemGPT/Letta-style memory: a fixed core block, a FIFO message queue whose oldest messages
are evicted to a recall store under memory pressure, and a search of that store at question time whose
hits page into the request. A reference design of a documented algorithm, not a seed system (see
:mod:`reference.pager.model`)."""
