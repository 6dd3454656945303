"""The Nemsy model: a Markdown Wiki (``sources/``, ``queries/``, ``insights/``, ``index.md``, ``log.md``)
with an ingest ledger, a recency Wiki loader, query archive, insight save and chat, in a sim.files tree.

Upstream: arrrr110/Nemsy @ 2338bab0aab96a91efb90a80249f33510b630260 (``agent.py``, ``vault.py``,
``cli.py``, ``web.py``), as specified by ``shared/fidelity/nemsy.md``. Operations keep upstream's names
(``ingest``, ``_parse_and_write_ingest``, ``_update_index``, ``append_log``, ``record_ingest``,
``get_file_status``, ``_load_wiki_context``, ``query``, ``_archive_query_result``, ``save_insight``,
``delete_wiki_note``, ``find_index_context``, ``collect_files``...). The model is not an LLM: the ingest
responder, answerer and insight rewriter are seeded policies (:mod:`systems.nemsy.policies`).

Tree layout (one tree per installation): ``vault/nemsy-wiki/`` (the Wiki), ``vault/origin-sources/``
(the raw root), ``.nemsy/ingest_log.json`` and ``.nemsy/token_log.json`` (beside the unused
``.nemsy/history`` directory). A source's "resolved path" is its tree path with a leading ``/``.
The agent clock gives page dates (``date.today()``), log minutes and ledger timestamps; the clock is UTC
and stands for upstream's local time.

Where the fidelity note and report 002 disagree (the index entry's full-width parentheses, the CRLF
marker failure, ARCHIVABLE never archiving by itself), the note wins; see ``fidelity.DIFFERENCES``.

Model requests: every model call (ingest, query, chat, lint, save; CLI and web) is recorded with
``sim.trace.request`` rather than ``sim.request``, for speed only. The record is field for field what
``sim.request`` would record for the same parts: ``exact_tokens`` = the sum of each part's exact cl100k
count, ``facts`` = the fact ids present in any part, ``messages`` = the number of parts, ``estimate`` None
(Nemsy has no estimator) and nothing ``needed``, plus Nemsy's own detail (command, pages, index size). The
one difference is how the count is computed: the index inside a prompt is counted entry by entry (see
:meth:`Nemsy.exact_tokens`), which is exact because each entry starts and ends on a cl100k pre-tokenizer
chunk boundary, and avoids re-encoding an index that grows with every write.
``tests/test_nemsy_requests.py`` checks every route's records against ``sim.request`` itself.

Upstream's loader stats every Wiki file and reads the N newest; this model keeps an mtime index of the
Wiki (updated by every write it makes, rebuilt by :meth:`Nemsy.rescan`), so selecting the newest N costs
O(N) and reads only those N bodies. The result is identical.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from sim.engine import Simulation
from sim.files import FileTree
from sim.text import FACT_RE, extract_facts
from sim.tokens import count_tokens
from systems.nemsy import faults as fp
from systems.nemsy.state import (
    FAITHFUL_VARIANT,
    FIX_BOUNDED_INDEX,
    FIX_DELETE_SYNC,
    FIX_HASH_STATUS,
    FIX_INDEX_UPSERT,
    FIX_INJECTIVE_NAMES,
    FIX_INVALIDATE_DERIVED,
    FIX_LEDGER_BACKUP,
    FIX_LEDGER_FAILED,
    FIX_PARSER_ANY_FENCE,
    FIX_PARSER_ANY_LEVEL,
    FIX_PARSER_FIXES,
    FIX_PARSER_REJECT_EMPTY,
    FIX_PARSER_SECTION_ONLY,
    FIX_REASON_ARCHIVE,
    FIX_RELEVANCE,
    FIX_RELOAD_SNAPSHOT,
    FIX_SAVE_EVICTED,
    FIX_STRICT_PARSER,
    FIX_UNIQUE_RESOLVE,
    FIX_WEB_FLAGS,
    IngestOutcome,
    LedgerRecord,
    Message,
    Resolution,
    Variant,
    WikiContext,
)

SYSTEM = "nemsy"

# -- constants (fidelity note §2) ---------------------------------------------------------------------
VAULT_DIR = "vault"
WIKI_DIR = "vault/nemsy-wiki"
RAW_DIR = "vault/origin-sources"
NEMSY_DIR = ".nemsy"
HISTORY_DIR = ".nemsy/history"
LEDGER_PATH = ".nemsy/ingest_log.json"
TOKEN_LOG_PATH = ".nemsy/token_log.json"
SOURCES, QUERIES, INSIGHTS = "sources", "queries", "insights"
INDEX_FILE, LOG_FILE = "index.md", "log.md"
GUIDANCE_FILE = "_index.md"
DEFAULT_MODEL = "deepseek-v4-flash"
REASONING_MODEL = "deepseek-v4-pro"
EMPTY_WIKI = "（Wiki 目前为空）"
EMPTY_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
LEDGER_VERSION = 2
#: ``index.md`` as python-frontmatter creates it, up to the first entry.
INDEX_HEAD = "---\nauto_generated: true\ntitle: Wiki 索引\n---\n\n# Nemsy Wiki 索引\n\n## 最近添加\n\n"

#: Pages per route (the index is loaded in full on top of these).
INGEST_PAGES = 10
INGEST_WIDE_PAGES = 50
QUERY_PAGES = 30
CHAT_PAGES = 20
LINT_PAGES = 50
#: A full scan with more pending files than this asks y/N.
SCAN_CONFIRM_OVER = 20
COLLECT_EXTENSIONS = (".md", ".txt")
SKIP_DIRS = frozenset(
    {".venv", "venv", ".env", "node_modules", ".git", ".obsidian", ".trash", "__pycache__", ".DS_Store"}
)
ARCHIVABLE = "ARCHIVABLE: true"
QUESTIONS_HEADING = "## 待探索问题"

# Short stand-ins for upstream's system prompts (their exact text is not modeled; see fidelity.py).
INGEST_SYSTEM = "你是 Nemsy，维护用户的 Wiki。当前任务：摄取新资料，输出 ---SUMMARY--- 与 ---QUESTIONS---。"
QUERY_SYSTEM = "你是 Nemsy，维护用户的 Wiki。当前任务：基于 Wiki 内容回答问题，末尾列出 [[页面名]] 来源。"
CHAT_SYSTEM = "你是 Nemsy。当前模式：自由对话，Wiki 作为主要知识来源，引用时标注 [[页面名]]。"
LINT_SYSTEM = "你是 Nemsy。当前任务：对 Wiki 进行健康检查。"
SAVE_SYSTEM = "你是 Nemsy。当前任务：将对话中的洞见整理为带 frontmatter 的 Wiki 页面。"

# -- regexes (fidelity note §2.2, §2.3, §2.10) ----------------------------------------------------------
_UNSAFE = re.compile(r"[^\w\u4e00-\u9fff\-_ ]")
_SUMMARY = re.compile(r"---SUMMARY---\n(.*?)(?=---QUESTIONS---|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:markdown)?\s*\n(.*?)\n```\s*$", re.DOTALL)
_QUESTIONS = re.compile(r"---QUESTIONS---\n(.*?)$", re.DOTALL)
_TITLE = re.compile(r"^title:\s*(.+)$", re.MULTILINE)
# The embedded-questions patterns (upstream: r"\n{0,2}---\n\n## 待探索问题\b.*$", then the same without the
# rule) are assembled in _cut_embedded, which the parser fixes vary. The parser fixes' own patterns:
_FENCE_ANY = re.compile(r"^```[\w-]*\s*\n(.*?)\n```\s*$", re.DOTALL)
_FENCE_LINE = re.compile(r"^```.*$", re.MULTILINE)
_SUMMARY_TOLERANT = re.compile(r"---SUMMARY---[ \t]*\n(.*?)(?=---QUESTIONS---|$)", re.DOTALL)
_QUESTIONS_TOLERANT = re.compile(r"---QUESTIONS---[ \t]*\n(.*?)$", re.DOTALL)
_ENTRY_STEM = re.compile(r"^- \[\[(.*?)\]\] — ", re.MULTILINE)


# ======================================================================================================
# Public pure functions (exported from systems.nemsy)
# ======================================================================================================
def sanitize_title(title: str) -> str:
    """Upstream's inline filename rule: delete ``[^\\w\\u4e00-\\u9fff\\-_ ]``, strip, spaces to ``-``.

    ``"C++ Notes"`` and ``"C# Notes"`` both give ``"C-Notes"``; ``"a  b"`` gives ``"a--b"``; ``"???"``
    gives ``""``.
    """
    return _UNSAFE.sub("", title).strip().replace(" ", "-")


def _unwrap_fence(text: str, pattern: re.Pattern[str] = _FENCE) -> str:
    m = pattern.match(text)
    return m.group(1).strip() if m else text


def parse_ingest_response(response: str) -> str | None:
    """The page body ``_parse_and_write_ingest`` would write for *response*, or None (nothing written).

    Requires ``---SUMMARY---\\n`` (CRLF or a trailing space fails); unwraps a bare or ``markdown`` fence
    only; cuts everything from an embedded ``## 待探索问题`` heading on; appends the ``---QUESTIONS---``
    part under that heading. An empty summary is accepted.
    """
    return parse_ingest_response_with(response)


def _cut_embedded(summary: str, ruled: bool, level: str, section_only: bool) -> str:
    """Remove an embedded questions heading (upstream: it and everything after it, then rstrip)."""
    pattern = r"\n{0,2}" + (r"---\n\n" if ruled else "") + level + r" 待探索问题\b"
    m = re.search(pattern, summary)
    if m is None:
        return summary.rstrip()
    head = summary[: m.start()].rstrip()
    if not section_only:
        return head
    nxt = re.search(r"\n#{1,6} ", summary[m.end() :])
    if nxt is None:
        return head
    tail = summary[m.end() + nxt.start() :].strip("\n")
    return (head + "\n\n" + tail if head else tail).rstrip()


def parse_ingest_response_with(response: str, fixes: frozenset[str] = frozenset()) -> str | None:
    """:func:`parse_ingest_response` with some of the parser fixes switched on (each one quirk of §2.3):

    - ``questions-section-only``: an embedded questions heading removes only its own section (up to the
      next heading), not every later section;
    - ``questions-heading-any-level``: the embedded heading is matched at any level ``#{2,}``, so
      ``### 待探索问题`` leaves no stray ``#``;
    - ``any-fence-unwrapped``: a fence with any info string (```` ```md ````) is unwrapped;
    - ``empty-summary-rejected``: a summary with no text after the cuts (fence lines, rules and ``#`` do
      not count) writes nothing;
    - ``strict-parser``: all four, plus a CRLF-tolerant marker.

    With no fixes this is upstream's regex sequence exactly (the ``re.sub`` calls of §2.3 remove from the
    first match to the end, which :func:`_cut_embedded` does with a search and a slice).
    """
    strict = FIX_STRICT_PARSER in fixes
    section_only = strict or FIX_PARSER_SECTION_ONLY in fixes
    level = r"#{2,}" if strict or FIX_PARSER_ANY_LEVEL in fixes else "##"
    fence = _FENCE_ANY if strict or FIX_PARSER_ANY_FENCE in fixes else _FENCE
    reject_empty = strict or FIX_PARSER_REJECT_EMPTY in fixes
    text = response.replace("\r\n", "\n") if strict else response
    m = (_SUMMARY_TOLERANT if strict else _SUMMARY).search(text)
    if m is None:
        return None
    summary = _unwrap_fence(m.group(1).strip(), fence)
    summary = _cut_embedded(summary, True, level, section_only)
    summary = _cut_embedded(summary, False, level, section_only)
    if reject_empty and not re.search(r"\w", _FENCE_LINE.sub("", summary)):
        return None
    q = (_QUESTIONS_TOLERANT if strict else _QUESTIONS).search(text)
    questions = q.group(1).strip() if q else ""
    if questions:
        summary = summary + "\n\n---\n\n" + QUESTIONS_HEADING + "\n\n" + questions
    return summary


def parse_ingest_response_strict(response: str) -> str | None:
    """The strict-parser fix: every parser fix of :func:`parse_ingest_response_with` and a CRLF-tolerant
    marker."""
    return parse_ingest_response_with(response, frozenset({FIX_STRICT_PARSER}))


def index_entry(stem: str, summary_line: str, day: str) -> str:
    """One ``index.md`` line: ``- [[stem]] — summary （YYYY-MM-DD）\\n`` (U+2014, full-width parentheses)."""
    return f"- [[{stem}]] — {summary_line} （{day}）\n"


def content_hash(text: str) -> str:
    """The ledger hash: sha256 hex of the *stripped* UTF-8 content (empty: the ``e3b0c442…`` constant)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def cli_file_status(record: LedgerRecord | None, content: str) -> str:
    """``get_file_status``: ``empty`` (stripped content empty), ``new`` (no record), ``done`` (hash
    matches) or ``changed``."""
    if not content.strip():
        return "empty"
    if record is None:
        return "new"
    if record.hash == content_hash(content):
        return "done"
    return "changed"


def _naive(ts: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).replace(tzinfo=None)


def display_file_status(record: LedgerRecord | None, size: int, mtime: float) -> str:
    """The web/``nemsy sources`` badge: ``empty`` (0 bytes), ``new`` (no record or no ``ingested_at``),
    ``changed`` (mtime later than the last ``ingested_at``) or ``done``."""
    if size == 0:
        return "empty"
    if record is None or not record.ingested_at:
        return "new"
    if _naive(mtime) > _dt.datetime.fromisoformat(record.ingested_at[-1]):
        return "changed"
    return "done"


def path_key(path: str) -> tuple[str, ...]:
    """The sort key of ``sorted(Path...)``: component-wise code-point order."""
    return tuple(path.split("/"))


def _loadable(path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    return path.endswith(".md") and base not in (INDEX_FILE, LOG_FILE)


def select_wiki_pages(paths_with_mtimes: Iterable[tuple[str, float]], max_files: int) -> list[str]:
    """The loader's page choice: ``*.md`` whose basename is not ``index.md``/``log.md``, newest mtime first,
    ties in path order, the first *max_files*."""
    ordered = sorted((p for p in paths_with_mtimes if _loadable(p[0])), key=lambda p: path_key(p[0]))
    ordered.sort(key=lambda p: p[1], reverse=True)
    return [p for p, _ in ordered[: max(0, max_files)]]


def resolve_citation(title: str, note_paths: Iterable[str]) -> str | None:
    """``GET /api/wiki/resolve``: the first note (in path order) whose lower-cased stem equals
    ``title.lower().removesuffix(".md")``, else None (404)."""
    target = title.lower().removesuffix(".md")
    for p in sorted(note_paths, key=path_key):
        if PurePosixPath(p).stem.lower() == target:
            return p
    return None


def resolve_candidates(title: str, note_paths: Iterable[str]) -> tuple[str, ...]:
    """Every note whose lower-cased stem matches *title* (path order)."""
    target = title.lower().removesuffix(".md")
    return tuple(p for p in sorted(note_paths, key=path_key) if PurePosixPath(p).stem.lower() == target)


def index_stems(index_text: str) -> list[str]:
    """The ``[[stem]]`` of every index entry, in file order (duplicates kept)."""
    return _ENTRY_STEM.findall(index_text)


_YAML_SPECIAL = re.compile(
    r"^(?:[-?:,\[\]{}#&*!|>'\"%@`\s]|~$|null$|Null$|NULL$|true$|True$|TRUE$|false$|False$|FALSE$"
    r"|yes$|no$|on$|off$|Yes$|No$|On$|Off$|[-+]?\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?$"
    r"|\d{4}-\d\d?-\d\d?)"
)


def _yaml_scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, list) and not value:
        return "[]"
    s = str(value)
    if s == "" or _YAML_SPECIAL.search(s) or ": " in s or " #" in s or s.endswith((" ", ":")) or "\n" in s:
        return "'" + s.replace("'", "''").replace("\n", " ") + "'"
    return s


def frontmatter_dumps(metadata: dict[str, Any], content: str) -> str:
    """``frontmatter.dumps(Post(content, **metadata))``: sorted YAML keys between ``---`` lines, a blank
    line, the content; the whole text stripped (python-frontmatter strips the formatted post)."""
    meta = "\n".join(f"{k}: {_yaml_scalar(metadata[k])}" for k in sorted(metadata))
    return f"---\n{meta}\n---\n\n{content}\n".strip()


def summarize_token_log(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """(MEM-OBJ-token-log) ``summarize_token_log()``: totals, and calls/tokens by command and by model."""
    by_command: dict[str, dict[str, int]] = {}
    by_model: dict[str, dict[str, int]] = {}
    out = {"total_calls": 0, "total_prompt_tokens": 0, "total_completion_tokens": 0, "total_tokens": 0}
    for r in records:
        out["total_calls"] += 1
        out["total_prompt_tokens"] += int(r.get("prompt_tokens", 0))
        out["total_completion_tokens"] += int(r.get("completion_tokens", 0))
        out["total_tokens"] += int(r.get("total_tokens", 0))
        for table, key in ((by_command, r.get("command", "")), (by_model, r.get("model", ""))):
            row = table.setdefault(str(key), {"calls": 0, "tokens": 0})
            row["calls"] += 1
            row["tokens"] += int(r.get("total_tokens", 0))
    return {**out, "by_command": by_command, "by_model": by_model}


@lru_cache(maxsize=131_072)
def _indented(compact: str, level: int) -> str:
    return json.dumps(json.loads(compact), ensure_ascii=False, indent=2).replace("\n", "\n" + " " * level)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class JsonPieces:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` of the ledger and the token log, with each
    record's text cached by object identity (records are never mutated in place, only replaced or
    appended), so a write costs a lookup per record instead of re-encoding all of them."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[object, str]] = {}
        self._log: tuple[int, object, str] = (0, None, "")

    def piece(self, value: Any, level: int, key: str | None = None) -> str:
        hit = self._cache.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        text = _indented(_compact(value), level)
        if key is not None:
            text = f"    {_compact(key)}: {text}"
        self._cache[id(value)] = (value, text)
        return text

    def ledger(self, data: dict[str, Any]) -> str:
        files = data.get("files")
        if list(data) != ["version", "files"] or not isinstance(files, dict) or not files:
            return json.dumps(data, ensure_ascii=False, indent=2)
        if len(self._cache) > 2 * len(files) + 64:
            live = {id(v) for v in files.values()}
            self._cache = {k: v for k, v in self._cache.items() if k in live}
        body = ",\n".join([self.piece(v, 4, k) for k, v in files.items()])
        return f'{{\n  "version": {_compact(data["version"])},\n  "files": {{\n{body}\n  }}\n}}'

    def token_log(self, records: Sequence[dict[str, Any]]) -> str:
        if not records:
            return "[]"
        count, last, body = self._log
        if not (0 < count <= len(records) and records[count - 1] is last):
            count, body = 0, ""
        new = [f"  {_indented(_compact(r), 2)}" for r in records[count:]]
        if new:
            body = ",\n".join([body, *new]) if body else ",\n".join(new)
        self._log = (len(records), records[-1], body)
        return "[\n" + body + "\n]"


def short_hash(text: str, n: int = 8) -> str:
    """The first *n* hex characters of sha256(*text*) (the injective-names fix's suffix)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


# ======================================================================================================
# The Wiki's mtime index (so the loader reads only the N selected bodies)
# ======================================================================================================
class MtimeIndex:
    """Every ``*.md`` under the Wiki, and the loadable ones ordered by (mtime desc, path order).

    :meth:`newest` returns the first N in O(N): no stat and no body read of the other pages.
    """

    def __init__(self) -> None:
        self.md: set[str] = set()
        self._keys: list[tuple[float, tuple[str, ...], str]] = []
        self._key_of: dict[str, tuple[float, tuple[str, ...], str]] = {}

    def put(self, rel: str, mtime: float) -> None:
        """Record that *rel* exists with *mtime*."""
        if not rel.endswith(".md"):
            return
        self.md.add(rel)
        if not _loadable(rel):
            return
        self.drop_key(rel)
        key = (-mtime, path_key(rel), rel)
        bisect.insort(self._keys, key)
        self._key_of[rel] = key

    def drop_key(self, rel: str) -> None:
        key = self._key_of.pop(rel, None)
        if key is not None:
            i = bisect.bisect_left(self._keys, key)
            del self._keys[i]

    def drop(self, rel: str) -> None:
        """Record that *rel* is gone."""
        self.md.discard(rel)
        self.drop_key(rel)

    def newest(self, n: int) -> list[str]:
        """The *n* newest loadable pages (ties in path order)."""
        return [k[2] for k in self._keys[: max(0, n)]]

    def loadable(self) -> list[str]:
        """Every loadable page, newest first."""
        return [k[2] for k in self._keys]

    def mtime(self, rel: str) -> float:
        return -self._key_of[rel][0]

    def __len__(self) -> int:
        return len(self._keys)


# ======================================================================================================
# The model
# ======================================================================================================
Responder = Callable[[str, str, str], str]  # (title, source content, wiki context text) -> response
Answerer = Callable[[str, WikiContext, Sequence[Message]], str]  # (question, context, history) -> answer
Rewriter = Callable[[str, str | None], str]  # (transcript, topic) -> insight markdown


def _default_responder(title: str, content: str, context: str) -> str:
    facts = " ".join(dict.fromkeys(m.group(0) for m in FACT_RE.finditer(content)))
    return f"---SUMMARY---\n# {title}\n\n{facts}\n---QUESTIONS---\n- {title}？"


def _default_answerer(question: str, ctx: WikiContext, history: Sequence[Message]) -> str:
    return "Wiki 中暂无此内容"


def _default_rewriter(transcript: str, topic: str | None) -> str:
    facts = " ".join(dict.fromkeys(m.group(0) for m in FACT_RE.finditer(transcript)))
    return f"---\ntitle: {topic or '对话'}\ntype: insight\n---\n\n# {topic or '对话'}\n\n{facts}"


class Nemsy:
    """One Nemsy installation (vault, Wiki, ledger, token log) in a file tree of *sim*.

    *variant* switches fixes on (the default is the faithful design). *responder*, *answerer* and
    *rewriter* stand in for the model (see :mod:`systems.nemsy.policies`). *record_requests* records
    every model request in the trace as ``sim.request`` does (the benchmark adapter turns it off and
    returns its own).

    Not modeled: The model itself (DeepSeek): replies come from seeded policies.
    Not modeled: Settings loading (TOML, .env, environment variables): the TOML defaults are used.
    Not modeled: Local time: the agent clock is UTC and stands for date.today()/datetime.now().
    Not modeled: Provider caching, overflow and truncation (RT-CMP-deepseek): requests are recorded only.
    Not modeled: search_notes and iter_notes, library helpers without a wired caller.
    """

    def __init__(
        self,
        sim: Simulation,
        *,
        tree: FileTree | None = None,
        agent: str = "nemsy",
        variant: Variant = FAITHFUL_VARIANT,
        responder: Responder | None = None,
        answerer: Answerer | None = None,
        rewriter: Rewriter | None = None,
        max_turns: int = 0,
        record_requests: bool = True,
    ) -> None:
        self.sim = sim
        self.agent = agent
        self.clock = sim.clock(agent)
        self.tree = tree if tree is not None else sim.tree("memory", agent=agent)
        self.variant = variant
        self.responder: Responder = responder or _default_responder
        self.answerer: Answerer = answerer or _default_answerer
        self.rewriter: Rewriter = rewriter or _default_rewriter
        self.max_turns = max_turns
        self.record_requests = record_requests
        self.pages = MtimeIndex()
        self.generation = 0  # bumped by every Wiki write (the reload-after-write fix reads it)
        self.calls: Counter[str] = Counter()  # model calls by command (ground truth for checkers)
        self.bytes_written = 0
        #: derived page -> {input page: content hash} at derivation time (ground truth; the
        #: invalidate-derived fix also uses it).
        self.derivations: dict[str, dict[str, str]] = {}
        #: page -> the source hash it was last written from (ground truth for checkers).
        self.page_source_hash: dict[str, str] = {}
        self._ledger_cache: dict[str, Any] | None = None
        self._ledger_json = JsonPieces()
        self._entries: list[str] = []  # index entries appended since the index was created (for counting)
        self._entries_joined = ""
        self._token_json = JsonPieces()
        self._tokens_cache: list[dict[str, Any]] | None = None
        self.rescan()

    # -- small helpers ---------------------------------------------------------------------------------
    def fixed(self, fix: str) -> bool:
        return self.variant.on(fix)

    def today(self) -> str:
        """``str(date.today())`` on the agent clock."""
        return self.clock.date()

    def now_naive_iso(self) -> str:
        """``datetime.now().isoformat()`` (naive) on the agent clock."""
        return self.clock.datetime().replace(tzinfo=None).isoformat()

    def _op(self, op: str, phase: str = "ok", **detail: Any) -> None:
        self.sim.trace.op(SYSTEM, op, agent=self.agent, phase=phase, **detail)

    @staticmethod
    def wiki(rel: str) -> str:
        """The tree path of Wiki-relative *rel*."""
        return f"{WIKI_DIR}/{rel}"

    @staticmethod
    def resolved(path: str) -> str:
        """``str(path.resolve())`` for a tree path: the ledger key."""
        return "/" + path.lstrip("/")

    # -- the Wiki file layer (vault.write_wiki_note / append_wiki_note / read_wiki_note) -------------------
    def rescan(self) -> None:
        """Rebuild the mtime index from the tree (after writes made behind the model's back)."""
        self.pages = MtimeIndex()
        prefix = WIKI_DIR + "/"
        for p in self.tree.list(WIKI_DIR):
            self.pages.put(p[len(prefix) :], self.tree.mtime(p))

    def _wiki_write(self, rel: str, text: str) -> None:
        self.bytes_written += self.tree.write_text(self.wiki(rel), text, clock=self.clock.seconds)
        self.pages.put(rel, self.tree.mtime(self.wiki(rel)))
        self.generation += 1

    def read_wiki_note(self, rel: str) -> str | None:
        """The raw text of Wiki-relative *rel*, or None."""
        path = self.wiki(rel)
        return self.tree.read_text(path) if self.tree.exists(path) else None

    def append_wiki_note(self, rel: str, text: str) -> None:
        """Append *text* (after a ``\\n`` if the file lacks a trailing newline) by rewriting the file."""
        existing = self.read_wiki_note(rel) or ""
        sep = "\n" if existing and not existing.endswith("\n") else ""
        self._wiki_write(rel, existing + sep + text)

    def write_wiki_note(self, rel: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Write (or overwrite) a note through python-frontmatter's ``dumps`` (raw when no *metadata*)."""
        self._wiki_write(rel, frontmatter_dumps(metadata, content) if metadata else content)

    def list_wiki_notes(self) -> list[str]:
        """``sorted(wiki.rglob("*.md"))`` as Wiki-relative paths."""
        return sorted(self.pages.md, key=path_key)

    def touch_wiki_note(self, rel: str) -> None:
        """Bump a page's mtime to now (an editor saving it unchanged)."""
        text = self.read_wiki_note(rel)
        if text is not None:
            self._wiki_write(rel, text)

    # -- index.md and log.md -----------------------------------------------------------------------------
    def _update_index(self, title: str, filename: str, summary_line: str) -> None:
        """(MEM-OBJ-wiki-index) Append ``- [[stem]] — line （date）`` to ``index.md``; create it (with
        frontmatter) when absent. Entries are never deduplicated, pruned or rewritten.

        The index-upsert fix first removes the stem's existing entries.
        """
        stem = PurePosixPath(filename).stem
        entry = index_entry(stem, summary_line, self.today())
        current = self.read_wiki_note(INDEX_FILE)
        if current is None:
            self.write_wiki_note(
                INDEX_FILE,
                f"# Nemsy Wiki 索引\n\n## 最近添加\n\n{entry}",
                {"title": "Wiki 索引", "auto_generated": True},
            )
            self._entries, self._entries_joined = [entry], entry
        else:
            self._entries.append(entry)
            self._entries_joined += entry
            if self.fixed(FIX_INDEX_UPSERT) and f"[[{stem}]]" in current:
                current = self._without_entries(current, {stem})
                self._wiki_write(INDEX_FILE, current)
            self.append_wiki_note(INDEX_FILE, entry)
        self._op("_update_index", stem=stem, summary=summary_line)

    @staticmethod
    def _without_entries(index_text: str, stems: set[str]) -> str:
        lines = index_text.splitlines(keepends=True)
        keep = [ln for ln in lines if not any(ln.startswith(f"- [[{s}]] — ") for s in stems)]
        return "".join(keep)

    def append_log(self, op: str, title: str, detail: str = "") -> None:
        """(MEM-OBJ-operation-log) Append ``\\n[YYYY-MM-DD HH:MM] op | title[ — detail]\\n`` to ``log.md``."""
        stamp = self.clock.datetime().strftime("%Y-%m-%d %H:%M")
        entry = f"\n[{stamp}] {op} | {title}" + (f" — {detail}" if detail else "") + "\n"
        self.append_wiki_note(LOG_FILE, entry)

    # -- the loader ------------------------------------------------------------------------------------
    def _load_wiki_context(
        self, max_files: int = QUERY_PAGES, *, query: str | None = None, route: str = "wiki.query"
    ) -> WikiContext:
        """(RT-BAP-wiki-context, MEM-OBJ-wiki-index, RT-RTE-wiki-answer) The index in full (outside the page
        count), then the *max_files* newest other pages (not ``index.md``/``log.md`` by basename), each as
        ``=== path ===\\ncontent``, joined by blank lines; ``（Wiki 目前为空）`` when there is no ``*.md``.
        No size cap anywhere.

        Not modeled: nothing (the mtime index returns exactly upstream's selection). The
        relevance-selection, invalidate-derived and shared-context-budget fixes change the selection.
        """
        if not self.pages.md:
            ctx = WikiContext(EMPTY_WIKI, (), max_files)
            self._op("_load_wiki_context", route=route, max_files=max_files, pages=[], index_chars=0)
            return ctx
        sections: list[tuple[str, str]] = []
        index_text = self.read_wiki_note(INDEX_FILE) if INDEX_FILE in self.pages.md else None
        budget = self.variant.context_chars if self.fixed(FIX_BOUNDED_INDEX) else None
        used = 0
        if index_text is not None:
            if budget is not None:
                index_text = self._clip_index(index_text, budget // 2)
            sections.append((INDEX_FILE, index_text))
            used = len(f"=== {INDEX_FILE} ===\n") + len(index_text)
        for rel in self._select(max_files, query):
            content = self.read_wiki_note(rel) or ""
            if budget is not None:
                size = len(f"\n\n=== {rel} ===\n") + len(content)
                if used + size > budget:
                    continue
                used += size
            sections.append((rel, content))
        text = "\n\n".join(f"=== {p} ===\n{c}" for p, c in sections)
        ctx = WikiContext(text, tuple(sections), max_files, len(index_text or ""))
        self._op(
            "_load_wiki_context",
            route=route,
            max_files=max_files,
            pages=list(ctx.pages),
            index_chars=ctx.index_chars,
            chars=len(text),
        )
        return ctx

    def _select(self, max_files: int, query: str | None) -> list[str]:
        if not (self.fixed(FIX_RELEVANCE) and query) and not self.fixed(FIX_INVALIDATE_DERIVED):
            return self.pages.newest(max_files)
        candidates = self.pages.loadable()
        if self.fixed(FIX_INVALIDATE_DERIVED):
            candidates = [p for p in candidates if not self.is_stale_derivation(p)]
        if self.fixed(FIX_RELEVANCE) and query:
            terms = {t.lower() for t in re.findall(r"[\w-]{3,}", query)}
            scored = []
            for rank, rel in enumerate(candidates):
                body = (self.read_wiki_note(rel) or "").lower()
                hits = sum(1 for t in terms if t in body)
                scored.append((-hits, rank, rel))
            scored.sort()
            candidates = [rel for _, _, rel in scored]
        return candidates[: max(0, max_files)]

    def _clip_index(self, index_text: str, limit: int) -> str:
        """The index with only its newest entries, so that it fits *limit* characters (shared-budget fix)."""
        if len(index_text) <= limit:
            return index_text
        lines = index_text.splitlines(keepends=True)
        head = [ln for ln in lines if not ln.startswith("- [[")]
        entries = [ln for ln in lines if ln.startswith("- [[")]
        size = sum(len(h) for h in head)
        kept: list[str] = []
        for ln in reversed(entries):
            if size + len(ln) > limit:
                break
            kept.append(ln)
            size += len(ln)
        return "".join(head) + "".join(reversed(kept))

    def is_stale_derivation(self, rel: str, _seen: frozenset[str] = frozenset()) -> bool:
        """Whether derived page *rel* was made from a page that has since changed, disappeared or itself
        become stale (transitively)."""
        inputs = self.derivations.get(rel)
        if not inputs or rel in _seen:
            return False
        for page, digest in inputs.items():
            text = self.read_wiki_note(page)
            if text is None or content_hash(text) != digest:
                return True
            if self.is_stale_derivation(page, _seen | {rel}):
                return True
        return False

    # -- model calls -------------------------------------------------------------------------------------
    def _request(self, command: str, route: str, parts: Sequence[str], ctx: WikiContext | None) -> int:
        """Record one model request through ``sim.trace.request`` with the fields ``sim.request`` would
        record for *parts* (exact cl100k tokens via :meth:`exact_tokens`, the fact ids present, the part
        count, no estimate) and return its prompt tokens. Not ``sim.request`` itself only because its
        whole-part counting re-encodes the growing index on every call."""
        self.calls[command] += 1
        if not self.record_requests:
            return 0
        facts: set[str] = set()
        for p in parts:  # not the cached extract_facts: prompts are large and mostly seen once
            facts.update(f"FACT-{num}" for num, _ in FACT_RE.findall(p))
        index_text = dict(ctx.sections).get(INDEX_FILE) if ctx else None
        rec = self.sim.trace.request(
            SYSTEM,
            route,
            agent=self.agent,
            exact_tokens=self.exact_tokens(parts, index_text),
            estimate=None,
            messages=len(parts),
            facts=frozenset(facts),
            command=command,
            pages=list(ctx.pages) if ctx else [],
            index_chars=ctx.index_chars if ctx else 0,
        )
        return rec.exact_tokens

    def exact_tokens(self, parts: Sequence[str], index_text: str | None = None) -> int:
        """The exact cl100k count of *parts* (as ``sim.request`` counts them: the sum over parts).

        The index is counted entry by entry. Every entry starts with ``- [[`` after a newline and ends with
        ``）\n``; cl100k's pre-tokenizer ends a chunk at ``）\n`` (a punctuation run takes its trailing
        newlines but not the ``-`` that follows) and at the ``\n\n`` closing ``INDEX_HEAD``, and BPE never
        merges across chunks. So a part's count equals the count of the part with the entries before the
        last one removed, plus each removed entry's (cached) count; the last entry stays in place because
        what follows the index can join its trailing newline. A request then costs O(entries) cache hits
        instead of re-encoding the whole index. Falls back to a plain count whenever the index is not
        exactly ``INDEX_HEAD`` + the entries this model appended (an upsert, a rescan, a clipped index).
        """
        entries = self._entries
        if index_text is None or len(entries) < 3 or index_text != INDEX_HEAD + self._entries_joined:
            return sum(count_tokens(p) for p in parts)
        reduced_index = INDEX_HEAD + entries[-1]
        total = 0
        for p in parts:
            if index_text in p:
                total += count_tokens(p.replace(index_text, reduced_index, 1))
                total += sum(count_tokens(e) for e in entries[:-1])
            else:
                total += count_tokens(p)
        return total

    def _record_tokens(
        self, command: str, prompt_tokens: int, response: str, model: str = DEFAULT_MODEL
    ) -> None:
        """(MEM-OBJ-token-log) Append ``{timestamp, command, model, prompt/completion/total tokens}``."""
        completion = count_tokens(response) if self.record_requests else 0
        records = self.load_token_log()
        records.append(
            {
                "timestamp": self.now_naive_iso(),
                "command": command,
                "model": model,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
                "total_tokens": prompt_tokens + completion,
            }
        )
        self._tokens_cache = records
        data = self._token_json.token_log(records)
        self.bytes_written += self.tree.write_text(TOKEN_LOG_PATH, data, clock=self.clock.seconds)

    def load_token_log(self) -> list[dict[str, Any]]:
        """``token_log.json`` (an invalid or non-list file reads as ``[]``)."""
        if self._tokens_cache is not None:
            return self._tokens_cache
        records: list[dict[str, Any]] = []
        if self.tree.exists(TOKEN_LOG_PATH):
            try:
                data = json.loads(self.tree.read_text(TOKEN_LOG_PATH))
                records = data if isinstance(data, list) else []
            except ValueError:
                records = []
        self._tokens_cache = records
        return records

    def summarize_token_log(self) -> dict[str, Any]:
        """(MEM-OBJ-token-log) The token-log summary shown by ``nemsy status`` and ``/api/status``."""
        return summarize_token_log(self.load_token_log())

    # -- ingest ----------------------------------------------------------------------------------------
    def ingest_prompt(self, content: str, title: str, index_context: str | None, ctx: WikiContext) -> str:
        """The ingest user prompt: title, guidance, ``---资料内容---``, source, ``---当前 Wiki 状态---``."""
        block = f"\n---目录语境（_index.md）---\n{index_context}\n" if index_context else ""
        return (
            f"请处理以下资料：\n\n标题：{title}\n{block}\n---资料内容---\n{content}\n\n"
            f"---当前 Wiki 状态---\n{ctx.text}\n"
        )

    def ingest(
        self,
        content: str,
        title: str,
        *,
        source_path: str | None = None,
        index_context: str | None = None,
        wide: bool = False,
    ) -> str | None:
        """(RT-RTE-document-ingest, MEM-OBJ-source-page) ``agent.ingest``: load 10 pages (50 wide), one model
        call, token log, parse and write the page and index, log ``ingest | title`` unconditionally, then the
        ledger record when *source_path* is set. Returns the page or None.

        Raises :class:`sim.faults.WriteFailed` when the model call fails (nothing recorded).
        Not modeled: Upstream's system prompts' exact text: short stand-ins are sent instead.
        """
        ctx = self._load_wiki_context(INGEST_WIDE_PAGES if wide else INGEST_PAGES, route="wiki.ingest")
        prompt_tokens = self._request(
            "ingest",
            "wiki.ingest",
            (INGEST_SYSTEM, self.ingest_prompt(content, title, index_context, ctx)),
            ctx,
        )
        self.sim.faults.point(fp.INGEST_LLM_CALL)
        response = self.responder(title, content, ctx.text)
        self._record_tokens("ingest", prompt_tokens, response)
        page = self._parse_and_write_ingest(response, title, source_path=source_path, content=content)
        self.sim.faults.point(fp.INGEST_AFTER_INDEX)
        self.append_log("ingest", title)
        self.sim.faults.point(fp.INGEST_AFTER_LOG)
        if source_path is not None:
            self.record_ingest(source_path, content, ingest_mode="full", wiki_page=page)
        self._op("ingest", title=title, source=source_path, page=page, wide=wide)
        return page

    def source_page_name(self, title: str, source_path: str | None) -> str:
        """``sources/<san(title)>-<date>.md`` (the injective-names fix adds a hash of the source path)."""
        name = sanitize_title(title)
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(source_path or title)}"
        return f"{SOURCES}/{name}-{self.today()}.md"

    def _parse_and_write_ingest(
        self, response: str, title: str, *, source_path: str | None = None, content: str = ""
    ) -> str | None:
        """(MEM-OBJ-source-page) Parse *response* (:func:`parse_ingest_response`) and write the page raw (no
        trailing newline, overwriting), then the index entry ``来自 <title> 的摘要``. None when the SUMMARY
        marker is missing: nothing is written.
        """
        body = parse_ingest_response_with(response, self.variant.fixed & FIX_PARSER_FIXES)
        if body is None:
            self._op("_parse_and_write_ingest", phase="fail", title=title, reason="no SUMMARY")
            return None
        filename = self.source_page_name(title, source_path)
        if self.fixed(FIX_INDEX_UPSERT) and source_path is not None:
            old = self.ledger_record(source_path)
            if old is not None and old.wiki_page and old.wiki_page != filename:
                self._remove_page(old.wiki_page)
        self._wiki_write(filename, body)
        self.page_source_hash[filename] = content_hash(content)
        self.derivations.pop(filename, None)
        self.sim.faults.point(fp.INGEST_AFTER_PAGE)
        self._update_index(title, filename, f"来自 {title} 的摘要")
        self._op("_parse_and_write_ingest", title=title, page=filename, chars=len(body))
        return filename

    def _remove_page(self, rel: str) -> None:
        """Delete a page and its index entries (used by the index-upsert and synchronized-delete fixes)."""
        if self.tree.exists(self.wiki(rel)):
            self.tree.delete(self.wiki(rel))
            self.pages.drop(rel)
            self.generation += 1
        stem = PurePosixPath(rel).stem
        index = self.read_wiki_note(INDEX_FILE)
        if index is not None and f"[[{stem}]]" in index:
            self._wiki_write(INDEX_FILE, self._without_entries(index, {stem}))

    # -- the ledger ------------------------------------------------------------------------------------
    def load_ingest_log(self) -> dict[str, Any]:
        """(MEM-OBJ-ingest-log) ``ingest_log.json``; a missing, invalid, non-dict or non-v2 file reads as an
        empty v2 ledger (the ledger-backup fix reads the backup instead)."""
        if self._ledger_cache is not None:
            return self._ledger_cache
        data = self._parse_ledger(LEDGER_PATH)
        if data is None and self.fixed(FIX_LEDGER_BACKUP):
            data = self._parse_ledger(LEDGER_PATH + ".bak")
        if data is None:
            data = {"version": LEDGER_VERSION, "files": {}}
        self._ledger_cache = data
        return data

    def _parse_ledger(self, path: str) -> dict[str, Any] | None:
        if not self.tree.exists(path):
            return None
        try:
            data = json.loads(self.tree.read_text(path))
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("version") != LEDGER_VERSION:
            return None
        if not isinstance(data.get("files"), dict):
            data["files"] = {}
        return data

    def _save_ledger(self, data: dict[str, Any]) -> None:
        self.sim.faults.point(fp.LEDGER_WRITE)
        text = self._ledger_json.ledger(data)
        self.bytes_written += self.tree.write_text(LEDGER_PATH, text, clock=self.clock.seconds)
        if self.fixed(FIX_LEDGER_BACKUP):
            self.bytes_written += self.tree.write_text(LEDGER_PATH + ".bak", text, clock=self.clock.seconds)
        self._ledger_cache = data

    def corrupt_ingest_log(self, text: str = "{not json") -> None:
        """Overwrite ``ingest_log.json`` with *text* (a crash mid-write, a hand edit, an old version)."""
        self.tree.write_text(LEDGER_PATH, text, clock=self.clock.seconds)
        self._ledger_cache = None
        self._op("corrupt_ingest_log", chars=len(text))

    def ledger_record(self, source_path: str) -> LedgerRecord | None:
        """The ledger record of *source_path* (a tree path), or None."""
        raw = self.load_ingest_log()["files"].get(self.resolved(source_path))
        return LedgerRecord.from_json(raw)

    def record_ingest(
        self,
        source_path: str,
        content: str,
        *,
        ingest_mode: str | None = "full",
        wiki_page: str | None = None,
    ) -> LedgerRecord:
        """(MEM-OBJ-ingest-log) Write the v2 record: stripped-content hash, prior hash, unstripped UTF-8 size,
        ``empty``/``done``, the timestamp appended, and the prior ``wiki_page`` kept when *wiki_page* is None.

        Raises :class:`sim.faults.WriteFailed` at ``nemsy.record_ingest.write``.
        """
        data = self.load_ingest_log()
        key = self.resolved(source_path)
        existing = data["files"].get(key) or {}
        if not isinstance(existing, dict):
            existing = {}
        status = "empty" if not content.strip() else "done"
        page = wiki_page or existing.get("wiki_page")
        if self.fixed(FIX_LEDGER_FAILED) and status == "done" and wiki_page is None:
            status = "failed"
        prior = existing.get("ingested_at") or []
        rec = LedgerRecord(
            hash=content_hash(content),
            prev_hash=existing.get("hash"),
            size=len(content.encode("utf-8")),
            status=status,
            ingest_mode=ingest_mode,
            ingested_at=(*[str(x) for x in prior], self.now_naive_iso()),
            wiki_page=page,
        )
        files = dict(data["files"])
        files[key] = rec.to_json()
        self._save_ledger({"version": LEDGER_VERSION, "files": files})
        self._op("record_ingest", source=key, status=status, wiki_page=page)
        return rec

    def get_file_status(self, source_path: str, content: str) -> str:
        """(MEM-OBJ-ingest-log) CLI status (hash based): empty / new / done / changed (failed is pending under
        the ledger-failed-status fix)."""
        rec = self.ledger_record(source_path)
        if self.fixed(FIX_LEDGER_FAILED) and rec is not None and rec.status == "failed" and content.strip():
            return "failed"
        return cli_file_status(rec, content)

    def display_status(self, source_path: str) -> str:
        """(MEM-OBJ-ingest-log) Web ``/api/sources`` and ``nemsy sources`` badge (mtime against the last
        ingestion); the hash-status fix shows the CLI status instead."""
        data = self.tree.read_bytes(source_path)
        if self.fixed(FIX_HASH_STATUS):
            return self.get_file_status(source_path, data.decode("utf-8", "replace"))
        return display_file_status(self.ledger_record(source_path), len(data), self.tree.mtime(source_path))

    # -- raw sources, guidance, the CLI ingest driver -------------------------------------------------
    def write_source(self, rel: str, text: str, *, mtime: float | None = None) -> str:
        """The user writes raw source *rel* (under the raw root); *mtime* back- or forward-dates it."""
        path = f"{RAW_DIR}/{rel}"
        self.tree.write_text(path, text, clock=(lambda: mtime) if mtime is not None else self.clock.seconds)
        return path

    def touch_source(self, rel: str) -> None:
        """``touch`` a raw source: same bytes, mtime now."""
        path = f"{RAW_DIR}/{rel}"
        self.tree.write_bytes(path, self.tree.read_bytes(path), clock=self.clock.seconds)

    def collect_files(
        self,
        path: str,
        *,
        recursive: bool = False,
        extensions: Sequence[str] = COLLECT_EXTENSIONS,
        ignore_dirs: Sequence[str] = (),
    ) -> list[str]:
        """(RT-RTE-document-ingest) ``vault.collect_files``: a file gives ``[path]`` if its suffix matches; a
        directory gives its (recursive) files with a matching suffix and name ≠ ``_index.md``, skipping any
        path with a part in the skip set (matched against every part, ancestors included), sorted."""
        if self.tree.exists(path):
            return [path] if PurePosixPath(path).suffix in extensions else []
        skip = SKIP_DIRS | {WIKI_DIR.rsplit("/", 1)[-1]} | set(ignore_dirs)
        prefix = path.rstrip("/") + "/"
        out = []
        for f in self.tree.list(path):
            rest = f[len(prefix) :]
            if not recursive and "/" in rest:
                continue
            p = PurePosixPath(f)
            if p.suffix not in extensions or p.name == GUIDANCE_FILE:
                continue
            if any(part in skip for part in p.parts):
                continue
            out.append(f)
        return sorted(out, key=path_key)

    def find_index_context(self, file_path: str) -> str | None:
        """(MEM-OBJ-index-guidance) Ancestor ``_index.md`` guidance, farthest first, stopping after the raw
        root (or the tree root); each as ``<!-- 目录语境：label -->\\ntext``.

        Raises ValueError for a file outside the raw root that has an ancestor ``_index.md``.
        """
        dirs: list[str] = []
        cur = PurePosixPath(file_path).parent
        while True:
            d = "" if str(cur) == "." else str(cur)
            dirs.append(d)
            if d == RAW_DIR or d == "":
                break
            cur = cur.parent
        found = []
        for d in reversed(dirs):
            gpath = f"{d}/{GUIDANCE_FILE}" if d else GUIDANCE_FILE
            if not self.tree.exists(gpath):
                continue
            text = self.tree.read_text(gpath).strip()
            if not text:
                continue
            if d != RAW_DIR and not d.startswith(RAW_DIR + "/"):
                raise ValueError(f"{d or '/'} is not under the raw root {RAW_DIR}")
            label = "." if d == RAW_DIR else d[len(RAW_DIR) + 1 :]
            found.append(f"<!-- 目录语境：{label} -->\n{text}")
        return "\n\n".join(found) if found else None

    def resolve_ingest_path(self, path: str) -> str:
        """A relative PATH is taken under the raw root if it exists there, else as given (cwd = tree root)."""
        candidate = f"{RAW_DIR}/{path}"
        if self.tree.exists(candidate) or self.tree.is_dir(candidate):
            return candidate
        return path

    def cli_ingest(
        self,
        path: str | None = None,
        *,
        recursive: bool = False,
        force: bool = False,
        wide: bool = False,
        title: str | None = None,
        confirm: bool = True,
    ) -> list[IngestOutcome]:
        """(RT-RTE-document-ingest) ``nemsy ingest [PATH] [-r] [-f] [--wide] [-t T]``: collect, classify by
        hash status (empty → ledger only; done → skipped unless *force*; new/changed → ingested with ancestor
        guidance; the title is *title* for a single file, else the stem). A full scan with more than 20
        pending files proceeds only if *confirm*.

        Not modeled: Streaming output, the terminal UI, progress bars and --dry-run's printed list.
        """
        root = RAW_DIR if path is None else self.resolve_ingest_path(path)
        files = self.collect_files(root, recursive=recursive)
        single = self.tree.exists(root) and len(files) == 1
        outcomes: list[IngestOutcome] = []
        pending: list[tuple[str, str, str]] = []
        for f in files:
            try:
                content = self.tree.read_text(f)
            except (OSError, UnicodeDecodeError):
                content = ""
            status = self.get_file_status(f, content)
            if status == "empty":
                self.record_ingest(f, content, ingest_mode=None)
                outcomes.append(IngestOutcome(f, status, "recorded-empty"))
            elif status == "done" and not force:
                outcomes.append(IngestOutcome(f, status, "skipped"))
            else:
                pending.append((f, content, status))
        if path is None and len(pending) > SCAN_CONFIRM_OVER and not confirm:
            return outcomes + [IngestOutcome(f, s, "skipped") for f, _, s in pending]
        for f, content, status in pending:
            t = (title if single and title else None) or PurePosixPath(f).stem
            page = self.ingest(content, t, source_path=f, index_context=self.find_index_context(f), wide=wide)
            outcomes.append(IngestOutcome(f, status, "ingested", page))
        return outcomes

    def web_ingest(self, paths: Sequence[str], *, force: bool = False) -> list[IngestOutcome]:
        """(RT-RTE-document-ingest) ``POST /api/ingest``: ignores *force* and the ledger (re-ingests
        everything), no empty check, title = stem. The web-honors-flags fix skips ``done`` files unless
        *force*."""
        out = []
        for f in paths:
            content = self.tree.read_text(f)
            status = self.get_file_status(f, content)
            if self.fixed(FIX_WEB_FLAGS) and status == "done" and not force:
                out.append(IngestOutcome(f, status, "skipped"))
                continue
            page = self.ingest(
                content, PurePosixPath(f).stem, source_path=f, index_context=self.find_index_context(f)
            )
            out.append(IngestOutcome(f, status, "ingested", page))
        return out

    def sources(self) -> dict[str, str]:
        """``GET /api/sources``: every raw source (``.md``/``.txt``) with its display status."""
        return {f: self.display_status(f) for f in self.collect_files(RAW_DIR, recursive=True)}

    # -- query and archive -------------------------------------------------------------------------------
    def query_prompt(self, question: str, ctx: WikiContext) -> str:
        """The query user prompt: ``问题：q``, then ``---Wiki 内容---`` and the context.

        Not modeled: Query and lint user prompts' exact whitespace (the note gives parts and order only).
        """
        return f"问题：{question}\n\n---Wiki 内容---\n{ctx.text}\n"

    def query(
        self,
        question: str,
        *,
        archive: bool = False,
        wiki_context: WikiContext | None = None,
        reasoning: bool = False,
        max_files: int = QUERY_PAGES,
    ) -> str:
        """(RT-RTE-wiki-answer, RT-RTE-answer-archive, RT-RTE-reasoning-query) ``agent.query``: the supplied
        snapshot or a fresh 30-page load, one model call, token log, archive only when *archive* (the
        ``ARCHIVABLE: true`` marker alone never archives), then ``query | q — 归档：是|否``.

        Reasoning mode returns a tuple upstream: no token log, and ``-r -a`` raises AttributeError before
        writing (the reasoning-tuple-unpacked fix behaves like the ordinary path).

        Not modeled: Reasoning mode's thinking text, temperature and budget (only its tuple defect).
        """
        ctx = wiki_context or self._load_wiki_context(max_files, query=question, route="wiki.query")
        command = "query"
        prompt_tokens = self._request(
            command,
            "wiki.reason" if reasoning else "wiki.query",
            (QUERY_SYSTEM, self.query_prompt(question, ctx)),
            ctx,
        )
        answer = self.answerer(question, ctx, ())
        unpacked = not reasoning or self.fixed(FIX_REASON_ARCHIVE)
        if unpacked:
            model = REASONING_MODEL if reasoning else DEFAULT_MODEL
            self._record_tokens(command, prompt_tokens, answer, model)
        if archive:
            if not unpacked:
                self._op("query", phase="crash", question=question, error="AttributeError")
                raise AttributeError("'tuple' object has no attribute 'replace'")
            self._archive_query_result(question, answer, ctx)
        elif unpacked and ARCHIVABLE in answer:
            self._op("archive_hint", question=question)
        detail = (
            "使用 reasoner 模式"
            if reasoning and not self.fixed(FIX_REASON_ARCHIVE)
            else (f"归档：{'是' if archive else '否'}")
        )
        self.append_log("query", question, detail=detail)
        self._op("query", question=question, archive=archive, reasoning=reasoning, pages=list(ctx.pages))
        return answer

    def query_page_name(self, question: str) -> str:
        """``queries/<san(q[:40])>-<date>.md`` (the injective-names fix adds a hash of the whole question)."""
        name = sanitize_title(question[:40])
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(question)}"
        return f"{QUERIES}/{name}-{self.today()}.md"

    def _archive_query_result(self, question: str, answer: str, ctx: WikiContext | None = None) -> str:
        """(RT-RTE-answer-archive, MEM-OBJ-query-page) Write ``# q\\n\\n<answer minus ARCHIVABLE: true,
        stripped>`` with frontmatter ``{date, tags: [], title: q, type: query}``, overwriting; then the index
        line ``查询结果：q[:30]...``

        Not modeled: PyYAML quoting in frontmatter: titles are plain or single-quoted by a simple rule.
        """
        filename = self.query_page_name(question)
        body = f"# {question}\n\n{answer.replace(ARCHIVABLE, '').strip()}"
        self.write_wiki_note(
            filename, body, {"date": self.today(), "tags": [], "title": question, "type": "query"}
        )
        self._note_derivation(filename, answer, ctx)
        self.sim.faults.point(fp.ARCHIVE_AFTER_PAGE)
        self._update_index(question, filename, f"查询结果：{question[:30]}...")
        self._op("_archive_query_result", question=question, page=filename)
        return filename

    def _note_derivation(self, filename: str, text: str, ctx: WikiContext | None) -> None:
        cited = set(re.findall(r"\[\[([^\]|]+)\]\]", text))
        inputs: dict[str, str] = {}
        if ctx is not None:
            for rel, content in ctx.sections:
                if rel != INDEX_FILE and PurePosixPath(rel).stem in cited and rel != filename:
                    inputs[rel] = content_hash(content)
        self.derivations[filename] = inputs

    def web_query(self, question: str, *, archive: bool = False) -> str:
        """(RT-RTE-wiki-answer, RT-RTE-answer-archive) ``POST /api/query``: a fresh 30-page load and one call;
        *archive* is ignored and nothing is logged (the web-honors-flags fix archives and logs like the
        CLI)."""
        if self.fixed(FIX_WEB_FLAGS):
            return self.query(question, archive=archive)
        ctx = self._load_wiki_context(QUERY_PAGES, query=question, route="wiki.query")
        prompt_tokens = self._request(
            "query", "wiki.query", (QUERY_SYSTEM, self.query_prompt(question, ctx)), ctx
        )
        answer = self.answerer(question, ctx, ())
        self._record_tokens("query", prompt_tokens, answer)
        self._op("web_query", question=question, archive_requested=archive)
        return answer

    def lint(self) -> str:
        """(RT-RTE-wiki-lint) Load 50 pages, one call, token log, ``lint | Wiki 健康检查 — 自动健检完成``; the
        report is returned, nothing installed.

        Not modeled: Lint's report content: the stand-in returns empty ISSUES/SUGGESTIONS sections.
        """
        ctx = self._load_wiki_context(LINT_PAGES, route="wiki.lint")
        prompt = f"请对以下 Wiki 进行全面健康检查：\n\n---Wiki 内容---\n{ctx.text}\n"
        prompt_tokens = self._request("lint", "wiki.lint", (LINT_SYSTEM, prompt), ctx)
        report = "---ISSUES---\n---SUGGESTIONS---\n---NEXT_SOURCES---\n"
        self._record_tokens("lint", prompt_tokens, report)
        self.append_log("lint", "Wiki 健康检查", detail="自动健检完成")
        return report

    # -- insights --------------------------------------------------------------------------------------
    def save_insight(self, history: Sequence[Message], *, topic: str | None = None) -> str | None:
        """(RT-RTE-insight-save, MEM-OBJ-insight-page) Rewrite *history* in a fresh call (no Wiki context),
        fence-unwrap, title from the first ``title:`` line (else *topic*, else ``对话洞见``), write
        ``insights/<san(title)>-<date>.md`` raw (overwriting), index ``对话洞见：title[:30]``, log
        ``save | title — chat 归档``. None for an empty history.
        """
        if not history:
            return None
        transcript = "\n\n".join(f"{'用户' if m.role == 'user' else 'Nemsy'}：{m.content}" for m in history)
        prompt = f"请整理以下对话中的洞见：\n\n{transcript}" + (f"\n\n归档主题提示：{topic}" if topic else "")
        prompt_tokens = self._request("save", "wiki.save", (SAVE_SYSTEM, prompt), None)
        response = self.rewriter(transcript, topic)
        self._record_tokens("save", prompt_tokens, response)
        content = _unwrap_fence(response.strip())
        m = _TITLE.search(content)
        raw_title = m.group(1).strip().strip("\"'") if m else (topic or "对话洞见")
        name = sanitize_title(raw_title)
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(transcript)}"
        filename = f"{INSIGHTS}/{name}-{self.today()}.md"
        self._wiki_write(filename, content)
        self.derivations[filename] = {}
        self.sim.faults.point(fp.SAVE_AFTER_PAGE)
        self._update_index(raw_title, filename, f"对话洞见：{raw_title[:30]}")
        self.sim.faults.point(fp.SAVE_AFTER_INDEX)
        self.append_log("save", raw_title, detail="chat 归档")
        self._op("save_insight", title=raw_title, page=filename, messages=len(history))
        return filename

    # -- chat ------------------------------------------------------------------------------------------
    def chat_session(self, *, max_turns: int | None = None, max_files: int = CHAT_PAGES) -> ChatSession:
        """Start ``nemsy chat``: the 20-page Wiki snapshot is loaded now, once."""
        return ChatSession(self, self.max_turns if max_turns is None else max_turns, max_files)

    def chat_request(
        self,
        ctx: WikiContext,
        history: Sequence[Message],
        user_input: str,
        extra_system: str = "",
        route: str = "wiki.chat",
    ) -> str:
        """One chat call: system ``当前 Wiki 摘要：\\n<ctx>\\n\\n`` + chat rules, the history, the input."""
        system = f"当前 Wiki 摘要：\n{ctx.text}\n\n{extra_system}{CHAT_SYSTEM}"
        parts = (system, *(m.content for m in history), user_input)
        prompt_tokens = self._request("chat", route, parts, ctx)
        reply = self.answerer(user_input, ctx, history)
        self._record_tokens("chat", prompt_tokens, reply)
        return reply

    def web_chat(self, history: Sequence[Message], message: str) -> str:
        """(RT-RTE-conversation-chat) ``POST /api/chat``: 20 pages loaded fresh per request, the client's
        history verbatim, no log."""
        ctx = self._load_wiki_context(CHAT_PAGES, query=message, route="wiki.chat")
        return self.chat_request(ctx, history, message, route="wiki.web_chat")

    # -- lifecycle -------------------------------------------------------------------------------------
    def delete_wiki_note(self, filename: str, *, confirmed: bool = False) -> bool:
        """(MEM-CLM-storage-lifecycle) ``vault.delete_wiki_note``: False if missing, RuntimeError unless
        *confirmed*, else unlink. Index, log and ledger are untouched (the synchronized-delete fix removes the
        stem's index entries, logs the delete and drops ledger records pointing at the page). The error
        text is upstream's ``vault.py`` (the note gives none).
        """
        if self.read_wiki_note(filename) is None:
            return False
        if not confirmed:
            raise RuntimeError("删除操作必须先通过 click.confirm() 获得用户确认，再传入 confirmed=True")
        self.tree.delete(self.wiki(filename))
        self.pages.drop(filename)
        self.generation += 1
        if self.fixed(FIX_DELETE_SYNC):
            self._remove_page(filename)
            self.append_log("delete", PurePosixPath(filename).stem)
            data = self.load_ingest_log()
            files = {
                k: v
                for k, v in data["files"].items()
                if not (isinstance(v, dict) and v.get("wiki_page") == filename)
            }
            if len(files) != len(data["files"]):
                self._save_ledger({"version": LEDGER_VERSION, "files": files})
        self._op("delete_wiki_note", page=filename)
        return True

    def resolve(self, title: str) -> Resolution:
        """(MEM-RTE-browser-read) ``GET /api/wiki/resolve?title=``: the first note in path order with that
        lower-cased stem (None: 404); the ambiguous-citation-refused fix answers None when several match."""
        notes = self.list_wiki_notes()
        cands = resolve_candidates(title, notes)
        chosen = resolve_citation(title, notes)
        if self.fixed(FIX_UNIQUE_RESOLVE) and len(cands) > 1:
            chosen = None
        return Resolution(chosen, cands)

    def read_file(self, rel: str) -> str | None:
        """(MEM-RTE-browser-read) ``GET /api/file`` for a Wiki note: its raw text (no model call).

        Not modeled: /api/file's lexical containment check (the file tree refuses escaping paths itself).
        """
        return self.read_wiki_note(rel)

    def history_files(self) -> list[str]:
        """(MEM-ABS-history-store) Files under the configured history directory (upstream writes none)."""
        return self.tree.list(HISTORY_DIR)


class ChatSession:
    """(RT-RTE-conversation-chat) A CLI ``nemsy chat`` session: a Wiki snapshot loaded once at start, an
    in-memory history trimmed to the last ``2*max_turns`` messages after each ordinary turn (0 = unbounded).

    The ARCHIVABLE y/N prompt is the *accept_archive* argument of :meth:`say`.

    Not modeled: The browser UI (FileLibrary and Chat views, mode switches, local 'done' marks).
    """

    def __init__(self, nemsy: Nemsy, max_turns: int = 0, max_files: int = CHAT_PAGES) -> None:
        self.nemsy = nemsy
        self.max_turns = max_turns
        self.max_files = max_files
        self.history: list[Message] = []
        self.evicted_facts: list[str] = []  # the summarize-evicted fix's running summary
        self.snapshot = nemsy._load_wiki_context(max_files, route="wiki.chat")
        self.generation = nemsy.generation
        nemsy._op("chat_start", pages=list(self.snapshot.pages), max_turns=max_turns)

    def context(self) -> WikiContext:
        """The Wiki context the next turn uses (the start-of-session snapshot; reloaded after a write under
        the reload-after-write fix)."""
        if self.nemsy.fixed(FIX_RELOAD_SNAPSHOT) and self.generation != self.nemsy.generation:
            self.snapshot = self.nemsy._load_wiki_context(self.max_files, route="wiki.chat")
            self.generation = self.nemsy.generation
        return self.snapshot

    def say(self, user_input: str, *, accept_archive: bool = False) -> str:
        """(RT-RTE-conversation-chat) One ordinary turn: call with the history plus *user_input*, append both
        messages, run the optional ARCHIVABLE save, then trim."""
        extra = ""
        if self.evicted_facts:
            extra = "早前对话摘要：" + " ".join(self.evicted_facts) + "\n\n"
        reply = self.nemsy.chat_request(self.context(), self.history, user_input, extra_system=extra)
        self.history.append(Message("user", user_input))
        self.history.append(Message("assistant", reply))
        if ARCHIVABLE in reply and accept_archive:
            self.nemsy.save_insight(self.history)
        if self.max_turns > 0 and len(self.history) > 2 * self.max_turns:
            evicted = self.history[: -2 * self.max_turns]
            self.history = self.history[-2 * self.max_turns :]
            if self.nemsy.fixed(FIX_SAVE_EVICTED):
                for m in evicted:
                    for f in FACT_RE.finditer(m.content):
                        if f.group(0) not in self.evicted_facts:
                            self.evicted_facts.append(f.group(0))
            self.nemsy._op("chat_trim", evicted=len(evicted), kept=len(self.history))
        return reply

    def command(self, line: str) -> Any:
        """(RT-RTE-conversation-chat) A slash command (``/ingest PATH [-r] [-f] [--wide]``, ``/save [topic]``,
        ``/query q [-a]``); slash commands neither append to nor trim the history. ``/query`` reuses the
        20-page snapshot."""
        cmd, _, arg = line.lstrip("/").partition(" ")
        cmd = cmd.lower()
        if cmd == "ingest":
            toks = arg.split()
            flags = {t for t in toks if t.startswith("-")}
            path = " ".join(t for t in toks if not t.startswith("-")) or None
            return self.nemsy.cli_ingest(
                path,
                recursive=bool(flags & {"-r", "--recursive"}),
                force=bool(flags & {"-f", "--force"}),
                wide="--wide" in flags,
            )
        if cmd == "save":
            return self.nemsy.save_insight(self.history, topic=arg or None)
        if cmd == "query":
            q = arg
            archive = q.endswith((" -a", " --archive"))
            if archive:
                q = q.replace(" --archive", "").replace(" -a", "").strip()
            return self.nemsy.query(q, archive=archive, wiki_context=self.context())
        raise ValueError(f"unknown chat command /{cmd}")


def facts_in(text: str) -> frozenset[str]:
    """The fact ids in *text* (re-exported for checkers)."""
    return extract_facts(text)
