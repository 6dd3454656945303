"""Retrievers: how a reference design ranks stored texts by a question (issue 39).

A **retriever** is a callable that takes the documents (a list of strings, in the order the design
stored them) and returns an **index**: an object with ``search(query) -> list[tuple[int, float]]``, the
*hits* best first as ``(document position, score)``. A document not listed is not a hit. The design
takes the first K hits; how it orders ties is the retriever's to decide (the built-in BM25 orders equal
scores by document position). A retriever must be deterministic (same documents and query, same hits)
and must not touch the network: memsim is run offline and seeded.

A user plugs a retriever in without editing memsim, two ways (the ``retriever`` knob of ``bm25`` and
``pager``, e.g. ``--knob bm25.retriever=mypkg.search:make_index``):

* ``module:callable``: an importable callable, as above;
* a name registered under the ``memsim.retrievers`` entry-point group (``[project.entry-points.
  "memsim.retrievers"] mine = "mypkg.search:make_index"``).

``bm25`` (the default) is :class:`BM25Index`: Okapi BM25 scored by ``rank_bm25.BM25Okapi`` (rank-bm25
0.2.2; k1 = 1.5, b = 0.75, epsilon = 0.25, its defaults), the retriever of LongMemEval's own retrieval
study (xiaowu0162/LongMemEval ``src/retrieval/run_retrieval.py``, ``run_flat_retrieval``, read
2026-12-06). Why rank-bm25 and not bm25s (both measured in one process on a seeded 600-document,
200-query corpus by ``benchmarks/bench_bm25_libs.py``, 2026-12-06, machine loaded):

* **exactness**: rank-bm25 scores in float64 with the textbook Okapi term weight
  ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, idf ``log((N - n + 0.5) / (n + 0.5))``
  floored at ``epsilon * mean idf`` where it is negative; bm25s' ``robertson`` method drops the
  constant ``(k1 + 1)`` (its scores are exactly 1/2.5 of rank-bm25's on a corpus where no idf is
  floored), floors negative idf otherwise, and stores float32 scores, so ties and orders move with
  rounding: 35 of 200 full rankings identical with common words in the corpus (198 of 200 without);
  its default ``lucene`` method (idf ``log(1 + (N - n + 0.5) / (n + 0.5))``, no ``(k1 + 1)``) and
  ``atire`` are other variants (0 of 200 identical). LongMemEval's published BM25 numbers are
  BM25Okapi's;
* **speed**: bm25s scores a query 20 to 50 times faster (200 queries: 0.17 s against 0.004 to 0.008 s);
  both index 600 documents in about 0.01 to 0.02 s. At memsim's sizes (a LoCoMo conversation is about
  600 turns, a LongMemEval_S haystack about 500) rank-bm25's scoring costs about 3 ms a question: 5.4 s
  of the 12.9 s that LoCoMo's 1,986 questions take through ``bm25`` at one window (one process, machine
  loaded). Exact agreement with LongMemEval's retriever is worth that;
* **weight**: both are pure Python over numpy; rank-bm25 is one module. It is a main dependency, so
  the default install runs the reference designs offline.

Tokenization (``tokenizer``): ``words`` (default) lower-cases and takes runs of Unicode word characters
(``FACT-0017=amber`` is ``fact``, ``0017``, ``amber``, so a probe's question matches its fact);
``split`` is LongMemEval's ``text.split(" ")``, case kept. With *stopwords* the query's words in
:data:`STOPWORDS` are dropped before scoring (documents are indexed whole).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sim.errors import UsageError

RETRIEVERS_GROUP = "memsim.retrievers"
TOKENIZERS = ("words", "split")

_WORD = re.compile(r"\w+")

#: Common English function words (memsim's own list: pronouns, auxiliaries, articles, prepositions,
#: conjunctions and question words), dropped from a query by the ``stopwords`` fixes.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves""".split()  # noqa: SIM905
)


def tokenize(text: str, tokenizer: str = "words") -> list[str]:
    """*text*'s tokens under *tokenizer* (``words`` or ``split``)."""
    if tokenizer == "words":
        return _WORD.findall(text.lower())
    if tokenizer == "split":
        return text.split(" ")
    raise UsageError(f"unknown tokenizer {tokenizer!r}: expected one of {', '.join(TOKENIZERS)}")


class Index(Protocol):
    """What a retriever returns for a list of documents."""

    def search(self, query: str) -> list[tuple[int, float]]: ...


Retriever = Callable[[Sequence[str]], Index]


class BM25Index:
    """Okapi BM25 over *documents* with ``rank_bm25.BM25Okapi`` (its default k1, b, epsilon).

    ``search`` returns the documents with a score above 0, by score descending, equal scores by
    position (a document sharing no token with the query scores 0 and is not a hit).
    """

    def __init__(
        self, documents: Sequence[str], *, tokenizer: str = "words", stopwords: bool = False
    ) -> None:
        self.tokenizer = tokenizer
        self.stopwords = stopwords
        self.corpus = [tokenize(d, tokenizer) for d in documents]
        self._bm25: Any = None
        if self.corpus and any(self.corpus):
            from rank_bm25 import BM25Okapi

            self._bm25 = BM25Okapi(self.corpus)

    def query_tokens(self, query: str) -> list[str]:
        words = tokenize(query, self.tokenizer)
        if self.stopwords:
            words = [w for w in words if w.lower() not in STOPWORDS]
        return words

    def scores(self, query: str) -> list[float]:
        """Every document's score (rank-bm25's ``get_scores``), in document order."""
        if self._bm25 is None:
            return [0.0] * len(self.corpus)
        return [float(s) for s in self._bm25.get_scores(self.query_tokens(query))]

    def search(self, query: str) -> list[tuple[int, float]]:
        scored = [(i, s) for i, s in enumerate(self.scores(query)) if s > 0.0]
        return sorted(scored, key=lambda h: (-h[1], h[0]))


def bm25(documents: Sequence[str], *, tokenizer: str = "words", stopwords: bool = False) -> BM25Index:
    """The built-in retriever: :class:`BM25Index`."""
    return BM25Index(documents, tokenizer=tokenizer, stopwords=stopwords)


def load_retriever(spec: str) -> Retriever | None:
    """The user retriever *spec* names (``module:callable`` or a ``memsim.retrievers`` entry point), or
    None for the built-in ``bm25``; an unknown name or a failing import is a :class:`UsageError`."""
    if spec == "bm25":
        return None
    if ":" in spec:
        mod_name, _, attr = spec.partition(":")
        try:
            obj = getattr(importlib.import_module(mod_name), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"retriever {spec!r} cannot be loaded: {type(exc).__name__}: {exc}") from exc
    else:
        from importlib.metadata import entry_points

        found = [ep for ep in entry_points(group=RETRIEVERS_GROUP) if ep.name == spec]
        if not found:
            raise UsageError(
                f"unknown retriever {spec!r}: use 'bm25', 'module:callable' or a name registered under "
                f"the {RETRIEVERS_GROUP!r} entry-point group"
            )
        obj = found[0].load()
    if not callable(obj):
        raise UsageError(f"retriever {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]


def make_index(
    spec: str, documents: Sequence[str], *, tokenizer: str = "words", stopwords: bool = False
) -> Index:
    """An index of *documents* by retriever *spec* (the built-in BM25 takes *tokenizer* and *stopwords*;
    a user retriever gets the documents only)."""
    user = load_retriever(spec)
    if user is None:
        return bm25(documents, tokenizer=tokenizer, stopwords=stopwords)
    return user(list(documents))


def search(index: Index, query: str, n: int) -> list[tuple[int, float]]:
    """*index*'s hits for *query* over *n* documents, checked: positions in range, no repeats (a user
    retriever's error is a :class:`UsageError` naming what was wrong)."""
    hits = [(int(i), float(s)) for i, s in index.search(query)]
    seen: set[int] = set()
    for i, _ in hits:
        if not 0 <= i < n:
            raise UsageError(f"retriever returned document {i}, not one of the {n} documents")
        if i in seen:
            raise UsageError(f"retriever returned document {i} twice")
        seen.add(i)
    return hits
