"""``bm25``: retrieval over past turns or sessions with Okapi BM25 (rank-bm25's BM25Okapi, the retriever
of LongMemEval's retrieval study), the top K packed beside a recent tail. A reference design of a
documented algorithm, not a seed system (see :mod:`reference.bm25.model`)."""
