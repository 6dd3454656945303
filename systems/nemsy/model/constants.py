"""Nemsy's fixed names, paths, limits and prompt stand-ins (fidelity note §2.1, §2.6, §2.7).

Tree layout (one tree per installation): ``vault/nemsy-wiki/`` (the Wiki), ``vault/origin-sources/`` (the
raw root), ``.nemsy/ingest_log.json`` and ``.nemsy/token_log.json`` (beside the unused ``.nemsy/history``
directory). Upstream: arrrr110/Nemsy @ 2338bab, ``src/nemsy/config.py`` (TOML defaults), ``agent.py``.
"""

from __future__ import annotations

SYSTEM = "nemsy"

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
#: The shared character budget of the shared-context-budget fix (upstream has none).
CONTEXT_CHARS = 24_000
