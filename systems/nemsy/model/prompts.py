"""What each route sends to the model: its system prompt (a stand-in padded to upstream's cl100k size),
its user-prompt template (upstream's format strings, whitespace included), and the request's parts.

Upstream has no licence, so its prompts are not copied: each route's stand-in is memsim's own short text
plus a run of ``" ~"`` placeholder tokens, sized so that the assembled system prompt has exactly
upstream's cl100k count (fidelity note, Corrections 1). Like upstream, every stand-in substitutes the
absolute Wiki path into a ``Wiki 目录：{path}`` line followed by a blank line and a CJK character, so the
path adds the same number of tokens as it does upstream (the tokens around it chunk the same way).

Upstream (``agent.py`` 35-120, 455-472, 501-536; ``schema.py`` 16-28; ``web.py`` 281-301, 326-348):

========== ========================================= ===== ================== ==================
route      callers                                   empty ``vault/nemsy-wiki``  ``/vault/nemsy-wiki``
========== ========================================= ===== ================== ==================
ingest     CLI ingest, chat /ingest, /api/ingest       804   811                812
query      CLI query, chat /query, reasoning -r        672   679                680
web_query  /api/query                                  743   750                751
chat       CLI chat (base + addon, after the Wiki)     560   567                568
web_chat   /api/chat (base + addon, after the Wiki)    805   812                813
lint       CLI lint, chat /lint, /api/lint             577   584                585
save       chat /save, ARCHIVABLE prompt, /api/save    610   617                618
========== ========================================= ===== ================== ==================

A request is a sequence of parts, each labelled with its kind (``system``, ``message``, ``index``,
``page``). Parts are cut only where cl100k's pre-tokenizer starts a new chunk anyway (after a newline, before
a non-space character), so the sum of the parts' counts (how ``sim.request`` counts) equals the count of
the assembled texts exactly; the index is cut into blocks of
:data:`~systems.nemsy.model.pages.INDEX_BLOCK_LINES` lines, so a growing index re-counts only its last
block, and the vault keeps running totals of the blocks before it (:class:`~systems.nemsy.state.BlockTally`),
so a request adds those instead of reading every block again (:meth:`ModelCall.counted`): the same record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from sim.text import extract_facts
from sim.tokens import count_tokens
from systems.nemsy.model.constants import INDEX_FILE, WIKI_DIR
from systems.nemsy.state import BlockTally, WikiContext

#: The absolute Wiki path upstream substitutes (``settings.vault.wiki_path``); the model's tree root
#: stands for ``/``, as in the ledger's resolved paths.
WIKI_PATH = "/" + WIKI_DIR

#: cl100k tokens of upstream's assembled system prompt per route at an empty Wiki path (the table above;
#: for chat the base and addon only, without the Wiki context before them).
UPSTREAM_SYSTEM_TOKENS = {
    "ingest": 804,
    "query": 672,
    "web_query": 743,
    "chat": 560,
    "web_chat": 805,
    "lint": 577,
    "save": 610,
}

_BASE = (
    "你是 Nemsy（memsim 的替身提示：措辞由 memsim 自拟，长度按 cl100k 词元数与上游对齐）。\n"
    "Wiki 目录：{wiki_path}\n\n"
    "职责：维护用户的 Markdown Wiki；每页带 frontmatter（type、title、date、tags）。\n"
)
_ADDON = {
    "ingest": "当前任务：摄取一份资料，输出 ---SUMMARY---（页面全文）与 ---QUESTIONS---（后续问题）两段。\n",
    "query": "当前任务：只依据给出的 Wiki 内容作答，末尾以 [[页面名]] 列出来源；深度综合时另起一行写 "
    "ARCHIVABLE: true。\n",
    "web_query": "当前模式：知识库问答（网页），行内以 [[页面名]] 标注来源，只用知识库内容。\n",
    "chat": "当前模式：自由对话，Wiki 是唯一的知识来源，引用时标注 [[页面名]]。\n",
    "web_chat": "当前模式：自由对话（网页），以知识库本身的口吻作答，行内以 [[页面名]] 引用。\n",
    "lint": "当前任务：Wiki 健康检查，输出 ---ISSUES---、---SUGGESTIONS---、---NEXT_SOURCES--- 三段。\n",
    "save": "当前任务：把对话里的洞见整理成一页带 frontmatter（type: insight）的 Markdown。\n",
}
_PAD_LABEL = "（以下为长度占位）"
_PAD_UNIT = " ~"  # one cl100k token; a run of them is additive
#: Placeholder tokens per route, so that the stand-in's count equals UPSTREAM_SYSTEM_TOKENS.
PAD_TOKENS = {
    "ingest": 682,
    "query": 534,
    "web_query": 621,
    "chat": 443,
    "web_chat": 680,
    "lint": 456,
    "save": 495,
}
#: The summarize-evicted fix's own call (upstream has no such call, so nothing to match).
SUMMARIZE_SYSTEM = "你是 Nemsy。把下面已移出对话历史的轮次并入已有摘要，保留用户陈述的事实，输出新的摘要。\n"
#: The chat system prompt's prefix and separator around the Wiki context (``agent.py`` 469-472).
CHAT_PREFIX = "当前 Wiki 摘要：\n"
CHAT_SEPARATOR = "\n\n"


@lru_cache(maxsize=64)
def system_prompt(route: str, wiki_path: str = WIKI_PATH) -> str:
    """The stand-in system prompt of *route* (a key of :data:`UPSTREAM_SYSTEM_TOKENS`) for *wiki_path*."""
    text = _BASE + _ADDON[route] + _PAD_LABEL + _PAD_UNIT * PAD_TOKENS[route] + "\n"
    return text.replace("{wiki_path}", wiki_path)


# -- user-prompt templates (fidelity note Corrections 2) ------------------------------------------------
def query_user(question: str) -> tuple[str, str]:
    """CLI ``agent.query`` (``agent.py`` 334-338): head and tail around the context, indents included."""
    return f"问题：{question}\n\n    ---Wiki 内容---\n    ", "\n    "


def query_user_question_last(question: str) -> tuple[str, str]:
    """The ``question-after-context`` fix of :func:`query_user`: the same texts with the question moved
    after the context (head ``---Wiki 内容---``, tail ``问题：q``), so the request's prefix is the system
    prompt, then the index, whatever is asked."""
    return "    ---Wiki 内容---\n    ", f"\n\n问题：{question}\n    "


def reason_user(question: str) -> tuple[str, str]:
    """Reasoning ``query -r`` (``cli.py`` 571)."""
    return f"问题：{question}\n\n---Wiki 内容---\n", ""


def web_query_user(question: str) -> tuple[str, str]:
    """``POST /api/query`` (``web.py`` 324)."""
    return f"问题：{question}\n\n---知识库内容---\n", ""


def lint_user() -> tuple[str, str]:
    """CLI ``agent.lint`` (``agent.py`` 399-403)."""
    return "请对以下 Wiki 进行全面健康检查：\n\n    ---Wiki 内容---\n    ", "\n    "


def web_lint_user() -> tuple[str, str]:
    """``POST /api/lint`` (``web.py`` 369)."""
    return "请对以下 Wiki 进行全面健康检查：\n\n---Wiki 内容---\n", ""


def ingest_user(content: str, title: str, index_context: str | None) -> tuple[str, str, str]:
    """``agent.ingest`` (``agent.py`` 206-219): the head before the source, the source, and the text
    between the source and the context; the tail after the context is ``"\\n"``."""
    block = f"\n---目录语境（_index.md）---\n{index_context}\n" if index_context else ""
    return (
        f"请处理以下资料：\n\n标题：{title}\n{block}\n---资料内容---\n",
        content,
        "\n\n---当前 Wiki 状态---\n",
    )


def save_user(transcript: str, topic: str | None) -> str:
    """``agent.save_insight`` (``agent.py`` 561-566)."""
    return f"请整理以下对话中的洞见：\n\n{transcript}" + (f"\n\n归档主题提示：{topic}" if topic else "")


# -- parts ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexRun:
    """The index's leading blocks in a request as one segment, with their totals (*tally*): counted as
    the blocks would be, one part each, without reading them again (:meth:`ModelCall.counted`)."""

    blocks: tuple[str, ...]
    tally: BlockTally


Segment = tuple[str, str | IndexRun]  # (kind, text)


def context_segments(ctx: WikiContext, trail: str = "") -> list[Segment]:
    """The Wiki context as segments: the ``index.md`` header and its blocks, then one segment per page; the
    blank line between sections ends the section before it, and *trail* ends the last one. The blocks the
    context's tally covers are one :class:`IndexRun` (never the last block, which the blank line or
    *trail* may end)."""
    if ctx.index_blocks is None and not ctx.page_sections:
        return [("memory", ctx.empty_text + trail)] if ctx.empty_text or trail else []
    out: list[Segment] = []
    if ctx.index_blocks is not None:
        blocks, t = ctx.index_blocks, ctx.index_tally
        out.append(("index", f"=== {INDEX_FILE} ===\n"))
        if t is not None and 0 < t.blocks < len(blocks):
            out.append(("index", IndexRun(blocks[: t.blocks], t)))
            blocks = blocks[t.blocks :]
        out += [("index", b) for b in blocks]
    for rel, content in ctx.page_sections:
        if out:
            kind, text = out[-1]
            out[-1] = (kind, _text(text) + "\n\n")
        out.append(("page", f"=== {rel} ===\n{content}"))
    kind, text = out[-1]
    out[-1] = (kind, _text(text) + trail)
    return out


def _text(text: str | IndexRun) -> str:
    return text if isinstance(text, str) else "".join(text.blocks)


def _safe_cut(before: str, after: str) -> bool:
    """Whether a cut between *before* and *after* starts a new cl100k pre-tokenizer chunk anyway."""
    return bool(before) and bool(after) and before[-1] == "\n" and not after[0].isspace()


def tally_blocks(blocks: Sequence[str], base: BlockTally | None = None) -> BlockTally:
    """*base* (totals over blocks before these; none when omitted) extended by *blocks*: their exact counts
    and fact ids each taken alone, as a request takes its parts."""
    t = base or BlockTally()
    tokens, facts, chars, kept = t.tokens, set(t.facts), t.chars, t.cuts_kept
    first, last = t.first, t.last
    for b in blocks:
        if first or last:
            kept = kept and _safe_cut(last, b)
        else:
            first, kept = b, kept and bool(b)
        tokens += count_tokens(b)
        facts |= extract_facts(b)
        chars += len(b)
        last = b
    return BlockTally(t.blocks + len(blocks), tokens, frozenset(facts), chars, first, last, kept)


def tile(
    segments: Sequence[Segment], *, runs: bool = False
) -> tuple[tuple[str | IndexRun, ...], tuple[str, ...]]:
    """The parts and kinds of *segments* (one message): empty segments dropped, and a segment merged into
    the one before it wherever a cut there would change how cl100k chunks the text. An :class:`IndexRun`
    is its blocks, one part each; with *runs* it stays one item wherever none of its blocks would be merged
    (so the parts are the same, only not spelt out)."""
    parts: list[str | IndexRun] = []
    kinds: list[str] = []

    def last() -> str:
        p = parts[-1]
        return p if isinstance(p, str) else p.tally.last

    def spell_out_last_run() -> None:
        run, kind = parts.pop(), kinds.pop()
        assert isinstance(run, IndexRun)
        parts.extend(run.blocks)
        kinds.extend([kind] * len(run.blocks))

    for kind, text in segments:
        if isinstance(text, IndexRun):
            if runs and text.tally.cuts_kept and (not parts or _safe_cut(last(), text.tally.first)):
                parts.append(text)
                kinds.append(kind)
                continue
            texts: Sequence[str] = text.blocks
        else:
            texts = (text,)
        for t in texts:
            if not t:
                continue
            if parts and not _safe_cut(last(), t):
                if not isinstance(parts[-1], str):
                    spell_out_last_run()
                parts[-1] += t  # type: ignore[operator]
            else:
                parts.append(t)
                kinds.append(kind)
    return tuple(parts), tuple(kinds)


@dataclass(frozen=True)
class Counted:
    """A request's cost as :meth:`sim.engine.Simulation.request` counts its parts: exact tokens, fact
    ids, the number of parts and the tokens by kind (in the order the kinds first appear)."""

    tokens: int
    facts: frozenset[str]
    parts: int
    by_kind: dict[str, int]


@dataclass(frozen=True)
class ModelCall:
    """One model call as upstream assembles it (``llm.build_messages(system, history, user)``): the system
    prompt, the history messages and the user prompt, the first and last as segments."""

    command: str
    route: str
    system: tuple[Segment, ...]
    user: tuple[Segment, ...]
    history: tuple[str, ...] = ()

    @property
    def system_text(self) -> str:
        """The system prompt as sent."""
        return "".join(_text(t) for _, t in self.system)

    @property
    def user_text(self) -> str:
        """The user prompt as sent."""
        return "".join(_text(t) for _, t in self.user)

    def parts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The request's parts and their kinds: the tiled system prompt, one part per history message, the
        tiled user prompt."""
        parts, kinds = self._tiled(runs=False)
        return cast("tuple[str, ...]", parts), kinds

    def counted(self) -> Counted:
        """What :meth:`sim.engine.Simulation.request` counts of :meth:`parts`, the index's leading blocks
        taken from their tally (the same sums: each block is a part either way)."""
        tokens, n = 0, 0
        facts: set[str] = set()
        by_kind: dict[str, int] = {}
        for p, kind in zip(*self._tiled(runs=True)):
            if isinstance(p, str):
                c = count_tokens(p)
                facts |= extract_facts(p)
                n += 1
            else:
                c = p.tally.tokens
                facts |= p.tally.facts
                n += p.tally.blocks
            tokens += c
            by_kind[kind] = by_kind.get(kind, 0) + c
        return Counted(tokens, frozenset(facts), n, by_kind)

    def _tiled(self, *, runs: bool) -> tuple[tuple[str | IndexRun, ...], tuple[str, ...]]:
        sp, sk = tile(self.system, runs=runs)
        up, uk = tile(self.user, runs=runs)
        hist = tuple(m for m in self.history if m)
        return (*sp, *hist, *up), (*sk, *("message",) * len(hist), *uk)
