"""Workload text: deterministic filler and *fact tokens*.

Filler is drawn from a shipped word list (CPython's own documentation vocabulary, Zipf-weighted) as short
sentences, which tokenizes at roughly 4.8 characters per cl100k token, close to English prose. A fact
token such as ``FACT-0017=amber`` is an identifiable, atomic piece of knowledge: policies copy the fact
tokens they can see, and clipping, eviction and recency windows lose them mechanically, so retention is
measured by :func:`extract_facts` with no judge.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
from functools import lru_cache
from importlib import resources

from sim.tokens import text_cache

#: Values a fact can take (colors: one cl100k token each, easy to read in traces).
FACT_VALUES = (
    "amber", "azure", "beige", "black", "blue", "bronze", "brown", "coral", "crimson", "cyan",
    "gold", "gray", "green", "indigo", "ivory", "jade", "khaki", "lemon", "lilac", "lime",
    "magenta", "maroon", "mint", "navy", "olive", "orange", "peach", "pink", "plum", "purple",
    "red", "rose", "ruby", "rust", "salmon", "sand", "silver", "tan", "teal", "violet", "white",
)  # fmt: skip

#: A fact token: ``FACT-`` then an id of four or more digits (``FACT-0017``, ``FACT-12345``), ``=``, a value.
FACT_RE = re.compile(r"FACT-(\d{4,})=([a-z]+)")


@lru_cache(maxsize=1)
def _words() -> tuple[list[str], list[int]]:
    """The word list and its cumulative Zipf weights."""
    rows = resources.files("sim").joinpath("data/words.txt").read_text(encoding="utf-8").splitlines()
    pairs = [row.split("\t") for row in rows if row and not row.startswith("#")]
    return [w for w, _ in pairs], list(itertools.accumulate(int(n) for _, n in pairs))


def fact_id(index: int) -> str:
    """The id of fact *index*: ``FACT-0017`` (at least four digits; ``FACT-12345`` from 10,000 on)."""
    return f"FACT-{index:04d}"


def fact_token(index: int, value: str) -> str:
    """The fact token ``FACT-0017=amber``."""
    return f"{fact_id(index)}={value}"


def fact_value(rng: random.Random) -> str:
    """A fact value drawn from *rng*."""
    return rng.choice(FACT_VALUES)


#: The byte budget of :func:`extract_facts`' cache (texts, their fact sets and per-entry overhead).
FACT_CACHE_BYTES = 16 << 20
_NO_FACTS: frozenset[str] = frozenset()


def _fact_set_bytes(ids: frozenset[str]) -> int:
    # The shared empty set costs nothing; each id is a short string (about 60 bytes) in the set's table.
    return sys.getsizeof(ids) + 64 * len(ids) if ids else 0


@text_cache(FACT_CACHE_BYTES, _fact_set_bytes)
def extract_facts(text: str) -> frozenset[str]:
    """The ids of every fact token present in *text* (``{"FACT-0017", ...}``; ids of any width)."""
    found = FACT_RE.findall(text)
    return frozenset(f"FACT-{num}" for num, _ in found) if found else _NO_FACTS


def extract_fact_values(text: str) -> dict[str, str]:
    """Fact id to value for every fact token in *text* (the last occurrence wins)."""
    return {f"FACT-{num}": value for num, value in FACT_RE.findall(text)}


#: Size of the fixed sentence pool that filler samples from.
SENTENCE_POOL = 8192


@lru_cache(maxsize=1)
def _sentences() -> list[str]:
    """A fixed pool of prose-like sentences (5 to 12 Zipf-weighted words, a capital, occasional commas).

    The pool is generated once from a constant seed, so it is the same in every process and run; filler
    then costs one random draw per sentence instead of one per word.
    """
    words, cum = _words()
    rng = random.Random(0x5EED_F111)
    pool = []
    for _ in range(SENTENCE_POOL):
        n = rng.randint(5, 12)
        sentence = rng.choices(words, cum_weights=cum, k=n)
        sentence[0] = sentence[0].capitalize()
        for j in range(1, n - 1):
            if rng.random() < 0.12:
                sentence[j] += ","
        pool.append(" ".join(sentence) + ".")
    return pool


def filler(rng: random.Random, n_chars: int) -> str:
    """About *n_chars* characters of prose-like filler drawn from *rng* (exactly *n_chars* or fewer)."""
    if n_chars <= 0:
        return ""
    pool = _sentences()
    rand = rng.random
    out: list[str] = []
    size = 0
    while size < n_chars:
        s = pool[int(rand() * SENTENCE_POOL)]
        out.append(s)
        size += len(s) + 1
    return " ".join(out)[:n_chars].rstrip()


def filler_tokens(rng: random.Random, n_tokens: int) -> str:
    """Filler of roughly *n_tokens* cl100k tokens (4.8 characters per token)."""
    return filler(rng, int(n_tokens * 4.8))


def observation(rng: random.Random, n_chars: int, facts: list[str]) -> str:
    """An observation of about *n_chars* characters with the given fact tokens spread through it."""
    if not facts:
        return filler(rng, n_chars)
    body = n_chars - sum(len(f) + 2 for f in facts)
    share = max(0, body // (len(facts) + 1))
    parts: list[str] = []
    for f in facts:
        parts.append(filler(rng, share))
        parts.append(f)
    parts.append(filler(rng, share))
    return " ".join(p for p in parts if p)
