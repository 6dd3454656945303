"""Operations, simplifications and record coverage of the ``bm25`` reference design."""

from sim.fidelity import Coverage, Operation

_T = "tests/test_reference_bm25.py"

OPERATIONS = [
    Operation("add", ("BM25-ALG-okapi-index",), "store a turn (indexed lazily at the next question)"),
    Operation("index", ("BM25-ALG-okapi-index", "BM25-ALG-granularity"),
              "rank-bm25 BM25Okapi over turns or sessions (all roles, or user turns as LongMemEval)"),
    Operation("request", ("BM25-RTE-topk-pack", "BM25-RTE-recent-tail"),
              "reserve system prompt and question, keep the recent tail, pack the top K hits that fit"),
]  # fmt: skip
NOT_MODELED: list[str] = [
    "the reader model: memsim scores what reached the request, not an answer",
    "index expansion (LongMemEval's keyphrase/userfact keys need an LLM): out of scope offline",
    "session headers and dates in the request: each turn is one part `speaker: text` (a few tokens less)",
]
COVERAGE = {
    "BM25-ALG-okapi-index": Coverage(("model.Bm25Memory.index", "reference.retrieval.BM25Index"),
                                     (f"{_T}::test_rankings_match_rank_bm25_run_directly",)),
    "BM25-RTE-topk-pack": Coverage(("model.Bm25Memory.request",),
                                   (f"{_T}::test_packing_respects_the_budget_and_declares_reasons",)),
    "BM25-RTE-recent-tail": Coverage(("model.Bm25Memory.request", "model.Bm25Memory.recent"),
                                     (f"{_T}::test_packing_respects_the_budget_and_declares_reasons",)),
    "BM25-ALG-granularity": Coverage(("model.Bm25Memory._documents",),
                                     (f"{_T}::test_session_granularity_ranks_sessions",)),
}  # fmt: skip
