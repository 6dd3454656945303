"""Benchmark (not a test): rank-bm25 against bm25s on one corpus, in one process (issue 39).

    python benchmarks/bench_bm25_libs.py [--docs 600] [--queries 200] [--seed 1] [--json FILE] [--quick]

Why ``reference/retrieval.py`` scores with rank-bm25's ``BM25Okapi`` (the retriever of LongMemEval's
retrieval study): this prints, for a seeded corpus of *docs* documents (5 to 60 words from a 300-word
vocabulary plus four common words) and *queries* queries of 8 words, each library's index and query
time (one process, interleaved; a **ratio** is the figure to quote on a loaded machine), and how far
bm25s' ``robertson``, ``lucene`` and ``atire`` methods (k1 1.5, b 0.75) agree with BM25Okapi: the largest
score difference, the ratio of scores where both are non-zero, and how many full rankings (stable order,
ties by position) are identical. bm25s is not a memsim dependency: install it to run this (without it the
script reports no goal and says so). Goal rows (``benchmarks/harness.py``), all reported, none a target:

* ``bm25.bm25s_speed``: rank-bm25's query time over bm25s' (``robertson``), the peer;
* ``bm25.bm25s_agree``: the percentage of full rankings bm25s' best method gives identically to BM25Okapi.
"""

from __future__ import annotations

import random
import time

from harness import Goal, parser, report


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.quick:
        args.docs, args.queries = 200, 50
    try:
        import bm25s
    except ImportError:
        print("bm25s is not installed (pip install bm25s): nothing to compare")
        report("rank-bm25 vs bm25s", [], args.json, command="python benchmarks/bench_bm25_libs.py")
        return
    import numpy as np
    from rank_bm25 import BM25Okapi

    r = random.Random(args.seed)
    vocab = [f"w{i}" for i in range(300)] + ["the", "a", "is", "of"] * 20
    corpus = [[r.choice(vocab) for _ in range(r.randint(5, 60))] for _ in range(args.docs)]
    queries = [list(dict.fromkeys(r.choice(vocab) for _ in range(8))) for _ in range(args.queries)]

    t = time.perf_counter()
    okapi = BM25Okapi(corpus)
    build_r = time.perf_counter() - t
    t = time.perf_counter()
    want = [okapi.get_scores(q) for q in queries]
    query_r = time.perf_counter() - t
    print(f"rank-bm25 BM25Okapi: index {build_r:.4f} s, {args.queries} queries {query_r:.4f} s")

    def order(s: np.ndarray) -> list[int]:
        return list(np.argsort(-s, kind="stable"))

    speed: dict[str, float] = {}
    agree: dict[str, int] = {}
    for method in ("robertson", "lucene", "atire"):
        t = time.perf_counter()
        m = bm25s.BM25(method=method, k1=1.5, b=0.75)
        m.index(corpus, show_progress=False)
        build = time.perf_counter() - t
        t = time.perf_counter()
        got = [m.get_scores(q) for q in queries]
        query = time.perf_counter() - t
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(want, got))
        ratios = np.concatenate([a[(a != 0) & (b != 0)] / b[(a != 0) & (b != 0)] for a, b in zip(want, got)])
        same = sum(order(a) == order(b) for a, b in zip(want, got))
        speed[method], agree[method] = query_r / query, same
        print(f"bm25s {method}: index {build:.4f} s, queries {query:.4f} s (rank-bm25/bm25s query time "
              f"{query_r / query:.1f}x); max |score diff| {diff:.4f}; score ratio median "
              f"{float(np.median(ratios)):.4f}; identical full rankings {same}/{len(queries)}; "
              f"dtype {got[0].dtype}")  # fmt: skip

    best = max(agree, key=agree.__getitem__)
    goals = [
        Goal.of("bm25.bm25s_speed", "rank-bm25 query time vs bm25s robertson (the peer)",
                1 / speed["robertson"], "(reported)",
                f"{args.queries} queries, {args.docs} documents; bm25s is {speed['robertson']:.1f}x faster"),
        Goal.of("bm25.bm25s_agree", "full rankings bm25s gives as BM25Okapi does (its best method)",
                100 * agree[best] / len(queries), "(reported)",
                f"{agree[best]}/{len(queries)} with {best}; why memsim scores with BM25Okapi", unit="%"),
    ]  # fmt: skip
    report("rank-bm25 vs bm25s", goals, args.json, command="python benchmarks/bench_bm25_libs.py")


if __name__ == "__main__":
    main()
