"""Seeded model stand-ins for Nemsy (no LLM): the ingest responder, the answerer and the insight rewriter.

Each is a small frozen dataclass, callable with the arguments the model passes, deterministic given its
seeded stream (``sim.rng(...)``). They operate on fact tokens (``FACT-0017=amber``) so that what a page or an
answer retains is measured mechanically. Hypothesis draws them through :func:`responders`,
:func:`answerers` and :func:`rewriters`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from sim.text import FACT_RE
from systems.nemsy.state import Message, WikiContext

#: Ingest response faults (fidelity note §2.3): what a real model sometimes does.
RESPONSE_FAULTS = (
    "none",
    "missing-marker",
    "crlf",
    "fenced",
    "fenced-md",
    "embedded-questions",
    "empty-summary",
)
_ASK = re.compile(r"FACT-\d{4,}")


def fact_tokens(text: str) -> list[str]:
    """The fact tokens of *text* in order of appearance, each once."""
    return list(dict.fromkeys(m.group(0) for m in FACT_RE.finditer(text)))


@dataclass
class IngestResponder:
    """Writes ``---SUMMARY---`` (frontmatter, a heading, the source's fact tokens minus the drawn
    *lossiness*) and ``---QUESTIONS---``; *fault* injects one of :data:`RESPONSE_FAULTS`."""

    rng: random.Random = field(default_factory=lambda: random.Random(0))
    lossiness: float = 0.0
    fault: str = "none"

    def __call__(self, title: str, content: str, ctx: WikiContext) -> str:
        kept = [f for f in fact_tokens(content) if self.lossiness <= 0 or self.rng.random() >= self.lossiness]
        body = f"---\ntitle: {title}\ntype: source\ntags: []\n---\n\n# {title}\n\n" + (
            " ".join(kept) if kept else "（无要点）"
        )
        questions = f"- 【原文已有线索】{title} 的后续是什么？"
        marker = "---SUMMARY---\n"
        if self.fault == "missing-marker":
            marker = "SUMMARY:\n"
        elif self.fault == "crlf":
            marker = "---SUMMARY---\r\n"
        elif self.fault == "fenced":
            body = f"```markdown\n{body}\n```"
        elif self.fault == "fenced-md":
            body = f"```md\n{body}\n```"
        elif self.fault == "embedded-questions":
            body = f"{body}\n\n## 待探索问题\n\n- 还有什么？\n\n## 与已有知识的关系\n\n见 [[{title}]]"
        elif self.fault == "empty-summary":
            body = ""
        return f"{marker}{body}\n---QUESTIONS---\n{questions}"


@dataclass(frozen=True)
class FactAnswerer:
    """Answers a question naming ``FACT-nnnn`` ids with the first value of each it finds (history first,
    then the Wiki sections in context order), citing the pages it used; ``Wiki 中暂无此内容`` otherwise.
    *archivable* appends ``ARCHIVABLE: true``."""

    archivable: bool = False

    def __call__(self, question: str, ctx: WikiContext, history: Sequence[Message]) -> str:
        asked = list(dict.fromkeys(_ASK.findall(question)))
        found: list[str] = []
        cited: list[str] = []
        for fid in asked:
            hit: tuple[str, str | None] | None = None
            for m in history:
                v = re.search(re.escape(fid) + r"=([a-z]+)", m.content)
                if v:
                    hit = (f"{fid}={v.group(1)}", None)
                    break
            if hit is None:
                for rel, content in ctx.page_sections:  # the index holds no values: never joined whole
                    v = re.search(re.escape(fid) + r"=([a-z]+)", content)
                    if v:
                        hit = (f"{fid}={v.group(1)}", PurePosixPath(rel).stem)
                        break
            if hit is not None:
                found.append(hit[0])
                if hit[1] and hit[1] not in cited:
                    cited.append(hit[1])
        if not found:
            text = "Wiki 中暂无此内容"
        else:
            text = "根据 Wiki：" + " ".join(found)
            if cited:
                text += "\n\n来源：" + " ".join(f"[[{c}]]" for c in cited)
        if self.archivable:
            text += "\n\nARCHIVABLE: true"
        return text


@dataclass
class InsightRewriter:
    """Rewrites a transcript into an insight page: frontmatter ``title:`` (or none, for the fallback), the
    transcript's fact tokens minus *lossiness*; *fenced* wraps it in a markdown fence."""

    rng: random.Random = field(default_factory=lambda: random.Random(0))
    lossiness: float = 0.0
    title: str | None = "对话洞见整理"
    fenced: bool = False

    def __call__(self, transcript: str, topic: str | None) -> str:
        kept = [
            f for f in fact_tokens(transcript) if self.lossiness <= 0 or self.rng.random() >= self.lossiness
        ]
        head = (
            f"---\ntitle: {self.title}\ndate: today\ntype: insight\nsource: chat\ntags: []\n---\n\n"
            if self.title is not None
            else ""
        )
        body = f"{head}# {self.title or topic or '洞见'}\n\n> 结论\n\n## 主要洞见\n\n" + " ".join(kept)
        return f"```markdown\n{body}\n```" if self.fenced else body


@dataclass(frozen=True)
class EvictionSummarizer:
    """The summarize-evicted fix's stand-in summarizer: the summary so far plus each evicted user statement
    (``用户：…`` lines of the transcript), keeping the newest lines within *max_chars* characters."""

    max_chars: int = 2_000

    def __call__(self, summary: str, transcript: str) -> str:
        lines = [ln for ln in summary.splitlines() if ln]
        lines += [ln for ln in transcript.split("\n\n") if ln.startswith("用户：")]
        kept: list[str] = []
        size = 0
        for ln in reversed(lines):
            if size + len(ln) + 1 > self.max_chars:
                break
            kept.append(ln)
            size += len(ln) + 1
        return "\n".join(reversed(kept))


# -- Hypothesis strategies of policies ---------------------------------------------------------------------
def responders() -> Any:
    """Ingest responders with drawn lossiness and fault."""
    from hypothesis import strategies as st

    return st.builds(
        IngestResponder,
        rng=st.randoms(use_true_random=False),
        lossiness=st.sampled_from([0.0, 0.25, 0.5]),
        fault=st.sampled_from(RESPONSE_FAULTS),
    )


def answerers() -> Any:
    """Answerers (with or without the ARCHIVABLE marker)."""
    from hypothesis import strategies as st

    return st.builds(FactAnswerer, archivable=st.booleans())


def rewriters() -> Any:
    """Insight rewriters with drawn title mode, fence and lossiness."""
    from hypothesis import strategies as st

    return st.builds(
        InsightRewriter,
        rng=st.randoms(use_true_random=False),
        lossiness=st.sampled_from([0.0, 0.5]),
        title=st.sampled_from([None, "对话洞见整理", '"Quoted: title"']),
        fenced=st.booleans(),
    )


#: The separator between the turns of a conversation session's source document (the adapter's format).
TURN_SEPARATOR = "\n\n"


@dataclass
class VerbatimResponder:
    """The ingest stand-in for a real conversation session (no fact tokens to keep): the page is the
    session's source document verbatim, its blocks (turns, split at blank lines) kept in order while their
    cl100k counts fit *page_tokens*; the first block that does not fit ends the page. Upstream asks a model
    to write the page; the stand-in is a declared knob (``nemsy.page_tokens``) and reads nothing but the
    source (no evidence label reaches it). ``kept_chars`` is how much of the last source the page kept."""

    page_tokens: int = 1_500
    kept_chars: int = 0

    def __call__(self, title: str, content: str, ctx: WikiContext) -> str:
        from sim.tokens import count_tokens

        kept: list[str] = []
        used = 0
        for block in content.split(TURN_SEPARATOR):
            cost = count_tokens(block)
            if used + cost > self.page_tokens:
                break
            kept.append(block)
            used += cost
        text = TURN_SEPARATOR.join(kept)
        self.kept_chars = len(text)
        body = f"---\ntitle: {title}\ntype: source\ntags: []\n---\n\n# {title}\n\n{text}"
        return f"---SUMMARY---\n{body}\n---QUESTIONS---\n- {title} 的后续是什么？"
