"""Operations, simplifications and record coverage of the ``pager`` reference design."""

from sim.fidelity import Coverage, Operation

_T = "tests/test_reference_pager.py"

OPERATIONS = [
    Operation("add", ("PAGER-RTE-fifo-eviction", "PAGER-OBJ-recall-store"),
              "queue a message and write it to recall; evict the oldest at 75% of the window"),
    Operation("search", ("PAGER-RTE-recall-search",),
              "keyword or BM25 search of the recall store by the question"),
    Operation("request", ("PAGER-OBJ-core-block", "PAGER-RTE-recall-search"),
              "system prompt, core block, eviction note, queue, question, the page that fits"),
]  # fmt: skip
NOT_MODELED: list[str] = [
    "the model's own search queries: the query is the question's text (a model writes keywords; effect: "
    "the query carries the question's function words, which is what the common-words claim measures)",
    "the recursive summary's content: a note counts the evicted messages and keeps none of their text "
    "(effect: evicted evidence reaches the request only through the search page)",
    "core memory edits (core_memory_append/replace) and archival memory: the core block is fixed",
    "the memory-pressure warning and the model's reaction to it: eviction happens at the warning share",
    "pagination past the first page: one search, one page per question",
]
COVERAGE = {
    "PAGER-OBJ-core-block": Coverage(("model.CORE_BLOCK", "model.Pager.context"),
                                     (f"{_T}::test_the_queue_evicts_at_memgpts_thresholds",)),
    "PAGER-RTE-fifo-eviction": Coverage(("model.Pager.add",),
                                        (f"{_T}::test_the_queue_evicts_at_memgpts_thresholds",)),
    "PAGER-OBJ-recall-store": Coverage(("model.Pager.recall",),
                                       (f"{_T}::test_evicted_messages_page_back_by_search",)),
    "PAGER-RTE-recall-search": Coverage(("model.Pager.search", "model.Pager.request"),
                                        (f"{_T}::test_evicted_messages_page_back_by_search",)),
}  # fmt: skip
