"""Issue 14: the model against upstream Nemsy @ 2338bab on minimal sequences, one group per item.

Each test cites the upstream lines it pins (``src/nemsy/`` paths). Token counts are exact cl100k counts of
upstream's assembled prompts, measured at the pinned commit (fidelity note, Corrections 1).
"""

import json

import pytest
import yaml

from sim.engine import Simulation
from sim.tokens import count_tokens
from systems.nemsy import Message, Nemsy
from systems.nemsy.model import (
    EMPTY_WIKI,
    LEDGER_PATH,
    RAW_DIR,
    TOKEN_LOG_PATH,
    UPSTREAM_SYSTEM_TOKENS,
    WIKI_DIR,
    HTTPError,
    frontmatter_dumps,
    load_wiki_context,
    system_prompt,
)
from systems.nemsy.model.chat import QUERY_USAGE
from systems.nemsy.model.prompts import CHAT_PREFIX, CHAT_SEPARATOR
from systems.nemsy.policies import FactAnswerer, IngestResponder, InsightRewriter

WIKI = WIKI_DIR


def make(**kw) -> Nemsy:
    return Nemsy(
        Simulation(0), responder=IngestResponder(), answerer=FactAnswerer(), rewriter=InsightRewriter(), **kw
    )


def tick(n: Nemsy, seconds: float = 1.0) -> None:
    n.sim.env.run(until=n.sim.now + seconds)


def log_text(n: Nemsy) -> str:
    return n.read_wiki_note("log.md") or ""


# -- 1. system-prompt sizes --------------------------------------------------------------------------
#: Upstream's system prompt per route at four Wiki paths (agent.py 35-120, 455-472, 501-536; schema.py
#: 16-28; web.py 281-301, 326-348), measured on the assembled upstream text.
UPSTREAM = {
    "ingest": (804, 811, 812, 817),
    "query": (672, 679, 680, 685),
    "web_query": (743, 750, 751, 756),
    "chat": (560, 567, 568, 573),
    "web_chat": (805, 812, 813, 818),
    "lint": (577, 584, 585, 590),
    "save": (610, 617, 618, 623),
}
PATHS = ("", "vault/nemsy-wiki", "/vault/nemsy-wiki", "/Users/me/Documents/Obsidian/nemsy-wiki")


@pytest.mark.parametrize("route", sorted(UPSTREAM))
def test_stand_in_system_prompts_have_upstreams_size_at_every_path(route: str) -> None:
    """Each route's stand-in has upstream's exact cl100k count, and the Wiki path adds what it adds
    upstream (the declared constant is the empty-path count)."""
    assert tuple(count_tokens(system_prompt(route, p)) for p in PATHS) == UPSTREAM[route]
    assert UPSTREAM_SYSTEM_TOKENS[route] == UPSTREAM[route][0]


def test_chat_system_prompt_on_an_empty_wiki() -> None:
    """``当前 Wiki 摘要：\\n（Wiki 目前为空）\\n\\n`` + base + addon: 574 (CLI) and 819 (web) tokens at
    an empty path."""
    for route, expected in (("chat", 574), ("web_chat", 819)):
        assert count_tokens(CHAT_PREFIX + EMPTY_WIKI + CHAT_SEPARATOR + system_prompt(route, "")) == expected


def test_each_route_sends_its_own_system_prompt() -> None:
    """CLI, chat and web callers send the stand-in of upstream's prompt for that route (web chat and web
    query have their own, agent.py 78-97 vs web.py 281-301, 326-348)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    seen: dict[str, str] = {}

    def last(label: str) -> None:
        assert n.last_call is not None
        seen[label] = n.last_call.system_text

    n.cli_ingest("a.md")
    last("ingest")
    n.query("q?")
    last("query")
    n.query("q?", reasoning=True)
    last("reason")
    n.web_query("q?")
    last("web_query")
    n.lint()
    last("lint")
    n.web_lint()
    last("web_lint")
    n.save_insight([Message("user", "x")])
    last("save")
    s = n.chat_session()
    s.say("hi")
    last("chat")
    n.web_chat([], "hi")
    last("web_chat")

    wiki = n.wiki_path
    for label, route in (("ingest", "ingest"), ("query", "query"), ("reason", "query"), ("lint", "lint")):
        assert seen[label] == system_prompt(route, wiki)
    assert seen["web_query"] == system_prompt("web_query", wiki)
    assert seen["web_lint"] == system_prompt("lint", wiki)
    assert seen["save"] == system_prompt("save", wiki)
    assert seen["chat"].startswith(CHAT_PREFIX) and seen["chat"].endswith(system_prompt("chat", wiki))
    assert seen["web_chat"].endswith(system_prompt("web_chat", wiki))


def test_user_prompt_templates_whitespace_included() -> None:
    """Corrections 2: agent.py 334-338 (indented CLI query), cli.py 571 (reasoning), web.py 324 (web
    query), agent.py 399-403 (indented lint), web.py 369 (web lint), agent.py 210-219 (ingest)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.cli_ingest("a.md")
    ctx = load_wiki_context(n, 30)
    c = ctx.text

    assert n.query_call("q?", ctx).user_text == f"问题：q?\n\n    ---Wiki 内容---\n    {c}\n    "
    assert n.query_call("q?", ctx, reasoning=True).user_text == f"问题：q?\n\n---Wiki 内容---\n{c}"
    assert n.web_query_call("q?", ctx).user_text == f"问题：q?\n\n---知识库内容---\n{c}"
    lint = "请对以下 Wiki 进行全面健康检查："
    assert n.lint_call(ctx).user_text == f"{lint}\n\n    ---Wiki 内容---\n    {c}\n    "
    assert n.lint_call(ctx, web=True).user_text == f"{lint}\n\n---Wiki 内容---\n{c}"
    ingest = n.ingest_call("body", "t", None, ctx).user_text
    assert ingest == f"请处理以下资料：\n\n标题：t\n\n---资料内容---\nbody\n\n---当前 Wiki 状态---\n{c}\n"


# -- 2. damaged ledgers that still say version 2 -----------------------------------------------------
def _ledger_with(n: Nemsy, files: object) -> bytes:
    data = json.dumps({"version": 2, "files": files} if files != "absent" else {"version": 2}).encode()
    n.corrupt_ingest_log(data)
    return data


@pytest.mark.parametrize(
    ("files", "error"),
    [("absent", KeyError), ([], AttributeError), ({f"/{RAW_DIR}/a.md": []}, AttributeError)],
)
def test_damaged_ledger_raises_at_classification_and_writes_nothing(files: object, error: type) -> None:
    """``{"version": 2}`` raises KeyError and non-dict ``files`` or records AttributeError when the file is
    classified (vault.py 281, 285; cli.py 429-445): no model call, no page, the ledger unchanged."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    before = _ledger_with(n, files)

    with pytest.raises(error):
        n.cli_ingest("a.md")
    assert n.calls["ingest"] == 0 and n.list_wiki_notes() == []
    assert n.tree.read_bytes(LEDGER_PATH) == before


def test_null_ingested_at_raises_after_the_page_index_and_log() -> None:
    """``ingested_at: null`` raises TypeError in record_ingest (vault.py 319) after the page, the index
    entry and the log line were written; the ledger stays as it was; the display shows ``new``
    (web.py 176)."""
    n = make()
    key = f"/{RAW_DIR}/a.md"
    n.write_source("a.md", "FACT-0001=amber")
    before = _ledger_with(n, {key: {"hash": "old", "ingested_at": None}})

    with pytest.raises(TypeError):
        n.cli_ingest("a.md")
    assert n.list_wiki_notes() == ["index.md", "log.md", "sources/a-2026-01-05.md"]
    assert "ingest | a" in log_text(n)
    assert n.tree.read_bytes(LEDGER_PATH) == before
    assert n.display_status(f"{RAW_DIR}/a.md") == "new"


def test_non_utf8_ledger_raises_on_every_load() -> None:
    """A ledger that is not UTF-8 raises UnicodeDecodeError (vault.py 255-258 catch JSON and OS errors
    only)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.corrupt_ingest_log(b"\xff\xfe{")

    for _ in range(2):
        with pytest.raises(UnicodeDecodeError):
            n.cli_ingest("a.md")
    assert n.calls["ingest"] == 0


# -- 3. chat /ingest flags ---------------------------------------------------------------------------
def test_chat_ingest_dry_run_lists_only_and_exact_flag_tokens() -> None:
    """``/ingest --dry-run`` lists the pending files and returns before any model call; empty files are
    recorded during classification (cli.py 154-183, 436-440, 473-479). ``-dash.md`` is a path token."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.write_source("e.md", "  ")
    n.write_source("-dash.md", "FACT-0002=teal")
    s = n.chat_session()

    out = s.command("/ingest --dry-run")
    assert {o.path.rsplit("/", 1)[-1]: o.action for o in out} == {
        "-dash.md": "pending", "a.md": "pending", "e.md": "recorded-empty",
    }  # fmt: skip
    assert n.calls["ingest"] == 0 and n.ledger_record(f"{RAW_DIR}/e.md") is not None
    assert n.ledger_record(f"{RAW_DIR}/a.md") is None

    out = s.command("/ingest -dash.md")
    assert [(o.path, o.action) for o in out] == [(f"{RAW_DIR}/-dash.md", "ingested")]


# -- 4. collect_files -------------------------------------------------------------------------------
def test_ingest_dot_without_r_takes_direct_children_only() -> None:
    """``nemsy ingest .`` is the raw root (pathlib drops ``.``) and without ``-r`` takes only its direct
    children (vault.py 378-386), not ``d/x.md``."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.write_source("d/x.md", "FACT-0002=teal")

    assert [o.path for o in n.cli_ingest(".", dry_run=True)] == [f"{RAW_DIR}/a.md"]
    assert [o.path for o in n.cli_ingest(".", recursive=True, dry_run=True)] == [
        f"{RAW_DIR}/a.md", f"{RAW_DIR}/d/x.md",
    ]  # fmt: skip


# -- 5. the >20-pending confirmation ----------------------------------------------------------------
@pytest.mark.parametrize("path", [None, ".", "/vault/origin-sources", "vault/origin-sources/"])
def test_confirmation_whenever_the_resolved_path_is_the_raw_root(path: str | None) -> None:
    """More than 20 pending files under the raw root ask y/N whatever PATH spelled it (cli.py 481-494);
    a subfolder never asks."""
    n = make()
    for i in range(21):
        n.write_source(f"s{i:02d}.md", f"FACT-{i + 1:04d}=amber")
        n.write_source(f"sub/t{i:02d}.md", f"FACT-{i + 101:04d}=teal")

    assert {o.action for o in n.cli_ingest(path, confirm=False)} == {"cancelled"}
    assert n.calls["ingest"] == 0
    n.cli_ingest("sub", confirm=False)
    assert n.calls["ingest"] == 21


# -- 6. chat /query and the REPL's input -------------------------------------------------------------
def test_chat_query_usage_and_argument_parsing() -> None:
    """``/query`` alone prints the usage line only (cli.py 184-187); the argument has no leading space
    (cli.py 138), and with ``-a`` every `` -a`` is removed before every `` --archive`` (cli.py 190-192)."""
    n = make()
    s = n.chat_session()

    assert s.command("/query") == QUERY_USAGE
    assert n.calls["query"] == 0 and log_text(n) == ""
    s.command("/query    q - -a-archive -a")
    assert "query | q — 归档：是" in log_text(n)
    assert n.list_wiki_notes() == ["index.md", "log.md", "queries/q-2026-01-05.md"]


def test_repl_strips_input_skips_blank_lines_and_crashes_on_a_bare_slash() -> None:
    """Each line is stripped (cli.py 128); an empty line is skipped (133); ``/`` alone raises IndexError
    (138-139); ``/quit`` ends the session."""
    n = make()
    s = n.chat_session()

    assert s.input("   ") is None and n.calls["chat"] == 0
    s.input("  hello  ")
    assert [m.content for m in s.history] == ["hello", "Wiki 中暂无此内容"]
    with pytest.raises(IndexError):
        s.input("/")
    assert s.input("/Q") is None and s.closed


# -- 7. frontmatter through PyYAML -------------------------------------------------------------------
@pytest.mark.parametrize(
    "question",
    [
        "What do we know about FACT-0001 and the pricing discount agreed with the customer last week?",
        "tab\there",
        "new\n\n  line q",
        "carriage\rreturn",
        "yes",
        "it's",
    ],
)
def test_archived_frontmatter_is_pyyamls_safe_dump(question: str) -> None:
    """python-frontmatter dumps with PyYAML's safe dumper, sorted keys, width 80 (vault.py 132-133): long
    English titles fold, tabs and CR are double-quoted, reserved words single-quoted."""
    n = make()
    n._archive_query_result(question, "答案")
    text = n.tree.read_text(n.wiki(n.query_page_name(question)), translate_newlines=False)
    meta = {"date": "2026-01-05", "tags": [], "title": question, "type": "query"}
    dumped = yaml.dump(meta, Dumper=yaml.SafeDumper, default_flow_style=False, allow_unicode=True).strip()

    assert text == f"---\n{dumped}\n---\n\n# {question}\n\n答案"
    assert yaml.safe_load(text.split("---\n")[1]) == meta


def test_long_question_title_folds_onto_a_continuation_line() -> None:
    """The 94-character question above folds at a space onto a line indented two spaces."""
    q = "What do we know about FACT-0001 and the pricing discount agreed with the customer last week?"
    text = frontmatter_dumps({"title": q}, "x")
    assert "\n  last week?\n" in text


# -- 8. the ledger rewrite keeps the whole document -------------------------------------------------
def test_ledger_rewrite_keeps_unknown_keys_order_and_positions() -> None:
    """record_ingest mutates the loaded document and writes it back (vault.py 309-322, 241-243)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.write_source("b.md", "FACT-0002=teal")
    other = {"hash": "h", "prev_hash": None, "size": 1, "status": "done", "ingest_mode": "full",
             "ingested_at": ["2026-01-01T00:00:00"], "wiki_page": "sources/z.md"}  # fmt: skip
    doc = {"note": "hand", "version": 2, "files": {f"/{RAW_DIR}/a.md": other, "/else.md": other}, "z": [1]}
    n.corrupt_ingest_log(json.dumps(doc, ensure_ascii=False, indent=2))

    n.cli_ingest("a.md", force=True)
    n.cli_ingest("b.md")
    after = json.loads(n.tree.read_text(LEDGER_PATH))
    assert list(after) == ["note", "version", "files", "z"] and after["z"] == [1]
    assert list(after["files"]) == [f"/{RAW_DIR}/a.md", "/else.md", f"/{RAW_DIR}/b.md"]
    assert n.tree.read_text(LEDGER_PATH) == json.dumps(after, ensure_ascii=False, indent=2)


# -- 9. write_wiki_note without metadata ------------------------------------------------------------
def test_write_wiki_note_without_metadata_writes_empty_frontmatter() -> None:
    """``frontmatter.Post(content, **{})`` dumps as ``---\\n{}\\n---\\n\\n`` + content + ``\\n``, the
    whole text stripped at its ends (vault.py 115-134)."""
    n = make()
    n.write_wiki_note("sources/x.md", "\n  body  \n")
    assert n.read_wiki_note("sources/x.md") == "---\n{}\n---\n\n\n  body"


# -- 10. web /api/query ------------------------------------------------------------------------------
def test_web_query_prompts_token_log_and_no_log_line() -> None:
    """/api/query: the web-query prompts (web.py 324-348), a ``query`` token-log entry, no log, no archive."""
    n = make()
    n.web_query("q?", archive=True)

    assert n.last_call is not None and n.last_call.route == "wiki.web_query"
    assert n.last_call.user_text == f"问题：q?\n\n---知识库内容---\n{EMPTY_WIKI}"
    assert [r["command"] for r in json.loads(n.tree.read_text(TOKEN_LOG_PATH))] == ["query"]
    assert n.list_wiki_notes() == []


# -- 11. undeclared routes and behaviours ------------------------------------------------------------
def test_web_lint_logs_nothing_and_chat_lint_logs() -> None:
    """/api/lint: a 50-page load, a ``lint`` token-log entry, no log line (web.py 361-382); chat ``/lint``
    is the full lint with its log line (cli.py 151-153, agent.py 390-427)."""
    n = make()
    n.web_lint()
    assert log_text(n) == "" and n.calls["lint"] == 1
    n.chat_session().command("/lint")
    assert "lint | Wiki 健康检查 — 自动健检完成" in log_text(n) and n.calls["lint"] == 2
    assert [r["command"] for r in json.loads(n.tree.read_text(TOKEN_LOG_PATH))] == ["lint", "lint"]


def test_web_ingest_directory_recursive_and_missing_path() -> None:
    """/api/ingest on a directory collects it (recursive only when asked; filters apply), a missing path
    is a 404 (web.py 389-412)."""
    n = make()
    n.write_source("d/a.md", "FACT-0001=amber")
    n.write_source("d/e/b.md", "FACT-0002=teal")
    n.write_source("d/_index.md", "guide")

    assert n.web_ingest(f"/{RAW_DIR}/d")["ingested"] == 1
    assert n.web_ingest(f"/{RAW_DIR}/d", recursive=True)["ingested"] == 2
    with pytest.raises(HTTPError) as err:
        n.web_ingest("/nowhere")
    assert (err.value.status, err.value.detail) == (404, "Path not found: /nowhere")


def test_chat_read_only_commands_and_unknown() -> None:
    """``/status``, ``/sources`` and ``/help`` make no model call and write nothing; an unknown command
    prints its message and the loop goes on (cli.py 142-207)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.cli_ingest("a.md")
    s = n.chat_session()
    files = sorted(n.tree.list())
    calls = sum(n.calls.values())

    assert s.command("/status")["wiki"] == {
        "path": "/vault/nemsy-wiki", "exists": True, "total_notes": 3, "sources_count": 1, "queries_count": 0,
    }  # fmt: skip
    assert s.command("/sources") == {f"{RAW_DIR}/a.md": "done"}
    assert "/quit" in s.command("/help")
    assert s.command("/nope x") == "未知命令：/nope，输入 /help 查看可用命令"
    assert sorted(n.tree.list()) == files and sum(n.calls.values()) == calls and s.history == []


def test_api_wiki_lists_frontmatter_fields() -> None:
    """/api/wiki: type, title (else the stem), date and tags (else []) from each note's frontmatter; a
    note whose frontmatter does not parse gets empty fields (web.py 200-234)."""
    n = make()
    n._archive_query_result("What is x?", "答案")
    n.write_wiki_note("sources/plain.md", "no frontmatter here")
    n._wiki_write("sources/bad.md", "---\ntitle: [unclosed\n---\nbody")

    rows = {r["rel_path"]: r for r in n.web_wiki()}
    assert rows["queries/What-is-x-2026-01-05.md"] | {"abs_path": ""} == {
        "rel_path": "queries/What-is-x-2026-01-05.md", "abs_path": "", "type": "query",
        "title": "What is x?", "date": "2026-01-05", "tags": [],
    }  # fmt: skip
    assert (rows["sources/plain.md"]["title"], rows["sources/plain.md"]["tags"]) == ("plain", [])
    assert (rows["sources/bad.md"]["type"], rows["sources/bad.md"]["title"]) == ("", "bad")


def test_status_counts_every_md_and_direct_children_only() -> None:
    """/api/status: ``total_notes`` counts index.md and log.md too; sources and queries count direct
    children only; there is no insights count (web.py 112-143)."""
    n = make()
    n.write_source("a.md", "FACT-0001=amber")
    n.cli_ingest("a.md")
    n._wiki_write("sources/deep/x.md", "x")
    n.save_insight([Message("user", "x")])

    wiki = n.status()["wiki"]
    assert (wiki["total_notes"], wiki["sources_count"], wiki["queries_count"]) == (5, 1, 0)
    assert "insights_count" not in wiki


# -- issue 27: the last differences from upstream ------------------------------------------------------------
@pytest.mark.parametrize("recursive", [False, True])
@pytest.mark.parametrize("path", [".", "./"])
def test_ingest_without_raw_root_falls_back_to_the_working_directory(path: str, recursive: bool) -> None:
    """With no ``vault/origin-sources``, ``_resolve_ingest_path`` falls back to ``Path.cwd() / path``
    (``cli.py`` 368-386) and ``collect_files`` takes what is there (``vault.py`` 343-386): direct children
    only without ``-r``, and never anything under the Wiki dir (a skipped part)."""
    n = make()
    n.tree.write_text("notes.md", "FACT-0001=amber\n")
    n.tree.write_text("sub/deep.md", "FACT-0002=teal\n")

    first = n.cli_ingest(path, recursive=recursive)
    tick(n)
    again = n.cli_ingest(path, recursive=recursive, force=True)

    want = ["notes.md", "sub/deep.md"] if recursive else ["notes.md"]
    assert [o.path for o in first] == want and [o.action for o in first] == ["ingested"] * len(want)
    assert [o.path for o in again] == want  # the Wiki pages written in between are not collected
    ledger = json.loads(n.tree.read_text(LEDGER_PATH))["files"]
    assert sorted(ledger) == ["/" + p for p in want]
    log = n.read_wiki_note("log.md") or ""
    assert log.count("ingest | notes") == 2 and (log.count("ingest | deep") == 2) == recursive
    assert n.cli_ingest(None) == []  # no PATH scans the (missing) raw root: nothing to do


def test_log_append_rewrites_the_file_in_text_mode() -> None:
    """``append_wiki_note`` reads the whole file in text mode and writes it back (``vault.py`` 137-152):
    every ``\\r\\n`` and ``\\r`` already there becomes ``\\n``; the new entry is written as given; a file
    ending in ``\\r`` reads as ending in a newline, so no separator is added; the cost is the whole file."""
    n = make()
    n.query("a\rb")
    raw = n.tree.read_text(f"{WIKI}/log.md", translate_newlines=False)
    assert raw == "\n[2026-01-05 00:00] query | a\rb — 归档：否\n"

    before = n.bytes_written
    n.append_log("query", "c\r\nd", "归档：否")
    raw = n.tree.read_text(f"{WIKI}/log.md", translate_newlines=False)
    assert raw == (
        "\n[2026-01-05 00:00] query | a\nb — 归档：否\n\n[2026-01-05 00:00] query | c\r\nd — 归档：否\n"
    )
    assert n.bytes_written - before == len(raw.encode("utf-8"))

    n.tree.write_text(f"{WIKI}/log.md", "old\r")  # an editor's save behind the model
    n.append_log("lint", "t")
    raw = n.tree.read_text(f"{WIKI}/log.md", translate_newlines=False)
    assert raw == "old\n\n[2026-01-05 00:00] lint | t\n"


def test_index_append_rewrites_too_and_the_loader_sees_the_rewritten_text() -> None:
    """index.md is appended the same way (``agent.py`` 153-171): a question with ``\\r`` enters the index raw
    and becomes ``\\n`` at the next append; the loader reads what the file holds, in text mode."""
    n = make()
    n.query("x\ry", archive=True)
    n.query("z", archive=True)
    raw = n.tree.read_text(f"{WIKI}/index.md", translate_newlines=False)

    assert "\r" not in raw and "查询结果：x\ny..." in raw
    assert load_wiki_context(n, 30).text.startswith("=== index.md ===\n" + raw)


def test_web_ingest_of_the_working_directory() -> None:
    """``/api/ingest`` takes ``Path(".")`` as given (``web.py`` 389-412): the working directory exists, so its
    direct children are collected and ingested (memsim raised ``PathEscape`` on the empty tree path)."""
    n = make()
    n.tree.write_text("notes.md", "FACT-0001=amber\n")
    n.tree.write_text("sub/deep.md", "FACT-0002=teal\n")

    out = n.web_ingest(".")

    assert out["ingested"] == 1 and [r["file"] for r in out["results"]] == ["notes.md"]
