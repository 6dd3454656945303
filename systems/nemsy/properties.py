"""Named invariants of the Nemsy Wiki as pure checkers (Maelstrom style): each takes plain values (index
text, note lists, ledger JSON, loaded contexts, request facts) and returns a :class:`Verdict`; none raises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from sim.claims import Verdict
from sim.text import extract_fact_values, extract_facts
from systems.nemsy.model import index_stems, parse_ingest_response
from systems.nemsy.state import Resolution


def _stem(path: str) -> str:
    return PurePosixPath(path).stem


def check_relevant_page_loaded(
    loaded_pages: Mapping[str, str], all_pages: Mapping[str, str], fact_id: str, max_files: int
) -> Verdict:
    """The loader keeps its page budget (at most *max_files* pages) and, within it, loads a page holding
    *fact_id* whenever one exists and the budget is at least one."""
    if len(loaded_pages) > max_files:
        return Verdict.violated(f"{len(loaded_pages)} pages loaded for a budget of {max_files}")
    holders = sorted(p for p, text in all_pages.items() if fact_id in extract_facts(text))
    if not holders or max_files < 1:
        return Verdict.ok()
    if any(fact_id in extract_facts(t) for t in loaded_pages.values()):
        return Verdict.ok()
    return Verdict.violated(
        f"{fact_id} is only in {holders}, none of the {len(loaded_pages)} loaded "
        f"pages {sorted(loaded_pages)} (max_files={max_files})"
    )


def check_index_entries_resolve(index_text: str | None, notes: Iterable[str]) -> Verdict:
    """Every ``[[stem]]`` in the index names an existing note."""
    stems = {_stem(n) for n in notes}
    dead = [s for s in index_stems(index_text or "") if s not in stems]
    return Verdict.violated(f"index entries without a page: {dead}") if dead else Verdict.ok()


def check_done_records_have_pages(
    ledger: Mapping[str, Any], notes: Iterable[str], page_hash: Mapping[str, str] | None = None
) -> Verdict:
    """Every ``done`` ledger record points at an existing page (written from the recorded hash, when
    *page_hash* — page to the source hash it was written from — is given)."""
    existing = set(notes)
    bad = []
    for key, rec in sorted((ledger.get("files") or {}).items()):
        if not isinstance(rec, dict) or rec.get("status") != "done":
            continue
        page = rec.get("wiki_page")
        if page is None or page not in existing:
            bad.append(f"{key}: done, wiki_page={page!r} missing")
        elif page_hash is not None and page_hash.get(page) != rec.get("hash"):
            bad.append(
                f"{key}: done with hash {str(rec.get('hash'))[:8]} but {page} was written from "
                f"{str(page_hash.get(page))[:8]}"
            )
    return Verdict.violated("; ".join(bad)) if bad else Verdict.ok()


def check_deleted(
    page: str, notes: Iterable[str], index_text: str | None, ledger: Mapping[str, Any]
) -> Verdict:
    """A confirmed delete removed *page*: the file is gone, no index entry names its stem, and no ``done``
    ledger record still points at it."""
    if page in set(notes):
        return Verdict.violated(f"{page} still exists after a confirmed delete")
    if _stem(page) in index_stems(index_text or ""):
        return Verdict.violated(f"index.md still lists [[{_stem(page)}]] after {page} was deleted")
    for key, rec in sorted((ledger.get("files") or {}).items()):
        if isinstance(rec, dict) and rec.get("status") == "done" and rec.get("wiki_page") == page:
            return Verdict.violated(f"{key}: done, wiki_page={page!r} deleted")
    return Verdict.ok()


def check_ingested_sources_listed_once(
    index_text: str | None, notes: Iterable[str], ledger: Mapping[str, Any], sources: Iterable[str]
) -> Verdict:
    """Every source the ledger says was ingested (*sources*: ledger keys) has its page, and that page has
    exactly one index entry."""
    counts = Counter(index_stems(index_text or ""))
    existing = set(notes)
    files = ledger.get("files") or {}
    for key in sources:
        rec = files.get(key)
        page = rec.get("wiki_page") if isinstance(rec, dict) else None
        if page is None or page not in existing:
            return Verdict.violated(f"{key} was ingested but has no page (record {rec!r})")
        if counts[_stem(page)] != 1:
            return Verdict.violated(f"{page} has {counts[_stem(page)]} index entries")
    return Verdict.ok()


def check_unique_index_entries(index_text: str | None) -> Verdict:
    """No page appears in two index entries."""
    dup = sorted(s for s, n in Counter(index_stems(index_text or "")).items() if n > 1)
    return Verdict.violated(f"stems listed more than once in index.md: {dup}") if dup else Verdict.ok()


def check_one_page_per_source(notes: Iterable[str], prefixes: Mapping[str, str]) -> Verdict:
    """Each source (name to its page-name prefix) has at most one ``sources/`` page."""
    bad = []
    for name, prefix in sorted(prefixes.items()):
        mine = [n for n in notes if n.startswith(f"sources/{prefix}-")]
        if len(mine) > 1:
            bad.append(f"{name}: {mine}")
    return Verdict.violated("several pages for one source: " + "; ".join(bad)) if bad else Verdict.ok()


def check_distinct_sources_distinct_pages(
    ledger: Mapping[str, Any],
    notes: Iterable[str],
    index_text: str | None,
    expected: Mapping[str, str] | None = None,
    read: Any = None,
) -> Verdict:
    """Distinct sources ↔ distinct existing pages ↔ one index entry each; with *expected* (source key to
    the fact id it holds) and *read* (page to text), every expected source has a ``done`` record whose page
    holds its fact."""
    files = ledger.get("files") or {}
    for key, fact in sorted((expected or {}).items()):
        rec = files.get(key)
        if not isinstance(rec, dict) or rec.get("status") != "done" or not rec.get("wiki_page"):
            return Verdict.violated(f"{key} was ingested but the ledger says {rec!r}")
        if read is not None and fact not in extract_facts(read(rec["wiki_page"]) or ""):
            return Verdict.violated(f"{key}'s page {rec['wiki_page']} does not hold {fact}")
    pages: dict[str, list[str]] = {}
    for key, rec in sorted((ledger.get("files") or {}).items()):
        if isinstance(rec, dict) and rec.get("wiki_page"):
            pages.setdefault(rec["wiki_page"], []).append(key)
    shared = {p: ks for p, ks in pages.items() if len(ks) > 1}
    if shared:
        return Verdict.violated(f"one page for several sources: {shared}")
    counts = Counter(index_stems(index_text or ""))
    existing = set(notes)
    for p in pages:
        if p not in existing:
            return Verdict.violated(f"{p} missing")
        if counts[_stem(p)] != 1:
            return Verdict.violated(f"{_stem(p)} has {counts[_stem(p)]} index entries")
    return Verdict.ok()


def check_context_serves_budget(
    text: str, budget_chars: int, newest: tuple[str, str] | None, newest_entry: str | None, max_files: int
) -> Verdict:
    """The loaded context fits the shared character budget and still serves the Wiki: the newest page
    (*newest*: path and content) is loaded whenever the page budget allows one and it fits the whole budget
    on its own; without pages, the index's newest entry is loaded whenever it fits beside the index head."""
    v = check_context_within(text, budget_chars)
    if not v.holds:
        return v
    if newest is not None and max_files >= 1:
        rel, content = newest
        block = f"=== {rel} ===\n{content}"
        if len(block) <= budget_chars and block not in text:
            return Verdict.violated(f"the newest page {rel} fits the budget but was not loaded")
    entry = newest_entry or ""
    if max_files == 0 and entry and len(entry) + 120 <= budget_chars and entry not in text:
        return Verdict.violated(f"the newest index entry {entry.strip()!r} was not loaded")
    return Verdict.ok()


def check_context_within(text: str, budget_chars: int, index_chars: int | None = None) -> Verdict:
    """The loaded context fits the shared character budget (*index_chars*, the index's share, is only
    reported)."""
    if len(text) <= budget_chars:
        return Verdict.ok()
    share = "" if index_chars is None else f" ({index_chars} of them the index)"
    return Verdict.violated(f"context is {len(text)} chars{share}, budget {budget_chars}")


def check_answer_supported(answer: str, fact_id: str, source_pages: Mapping[str, str]) -> Verdict:
    """An answer states for *fact_id* only a value that some current ``sources/`` page holds."""
    stated = extract_fact_values(answer).get(fact_id)
    if stated is None:
        return Verdict.ok()
    held = sorted(v for t in source_pages.values() if (v := extract_fact_values(t).get(fact_id)) is not None)
    if stated in held:
        return Verdict.ok()
    return Verdict.violated(f"answer says {fact_id}={stated}; current source pages hold {held or 'none'}")


def check_answer_current(answer: str, fact_id: str, source_pages: Mapping[str, str]) -> Verdict:
    """An answer about *fact_id* states the value the current ``sources/`` pages hold (when one does), and
    no other value."""
    supported = check_answer_supported(answer, fact_id, source_pages)
    if not supported.holds:
        return supported
    held = sorted(x for t in source_pages.values() if (x := extract_fact_values(t).get(fact_id)) is not None)
    if held and extract_fact_values(answer).get(fact_id) is None:
        return Verdict.violated(f"the sources hold {fact_id}={held[0]} but the answer states no value")
    return Verdict.ok()


def check_snapshot_fresh(used: str, fresh: str, newest_page: str | None = None) -> Verdict:
    """The Wiki context a chat turn used equals a fresh load at that moment, and carries the newest page
    (*newest_page*, when the Wiki has one)."""
    if newest_page is not None and f"=== {newest_page} ===" not in used:
        return Verdict.violated(f"the turn's context lacks the newest page {newest_page}")
    if used == fresh:
        return Verdict.ok()
    return Verdict.violated(f"turn used a {len(used)}-char snapshot; a fresh load is {len(fresh)} chars")


def check_request_has_facts(request_facts: Iterable[str], stated: Iterable[str]) -> Verdict:
    """Every fact stated earlier in the conversation reaches the request."""
    missing = sorted(set(stated) - set(request_facts))
    return (
        Verdict.violated(f"facts stated earlier but missing from the request: {missing}")
        if missing
        else Verdict.ok()
    )


def check_history_bounded(history_sent: int, max_turns: int) -> Verdict:
    """With ``max_turns > 0`` a chat request carries at most ``2*max_turns`` history messages."""
    if max_turns > 0 and history_sent > 2 * max_turns:
        return Verdict.violated(f"{history_sent} history messages sent with max_turns={max_turns}")
    return Verdict.ok()


def check_display_done_after_ingest(display: str, just_ingested: bool) -> Verdict:
    """Right after a successful ingest of a non-empty file the display shows it ``done``."""
    if just_ingested and display != "done":
        return Verdict.violated(f"display={display} right after the file was ingested")
    return Verdict.ok()


def check_ledger_says_what_was_ingested(ledger: Mapping[str, Any], ingested: Mapping[str, str]) -> Verdict:
    """Every ingested source (*ingested*: ledger key to the content hash last ingested) has a ledger record
    with that hash."""
    files = ledger.get("files") or {}
    for key, digest in sorted(ingested.items()):
        rec = files.get(key)
        if not isinstance(rec, dict) or rec.get("hash") != digest:
            return Verdict.violated(f"{key} was ingested (hash {digest[:8]}) but the ledger has {rec!r}")
    return Verdict.ok()


def check_citation_names_its_page(res: Resolution, cite: str) -> Verdict:
    """A citation resolves to the one note it names: the note whose stem equals it exactly (else the one
    whose stem matches ignoring case); when several notes qualify it resolves to none of them."""
    target = cite.removesuffix(".md") if cite.lower().endswith(".md") else cite
    exact = [p for p in res.candidates if _stem(p) == target]
    named = exact if exact else list(res.candidates)
    if len(named) == 1 and res.path != named[0]:
        return Verdict.violated(f"[[{cite}]] names {named[0]} but resolved to {res.path}")
    if len(named) > 1 and res.path is not None:
        return Verdict.violated(f"resolved to {res.path} among {named} that the citation names equally")
    return Verdict.ok()


def check_status_agree(per_source: Mapping[str, tuple[str, str]]) -> Verdict:
    """CLI (hash) status and display (mtime) status agree for every source."""
    bad = {k: v for k, v in per_source.items() if v[0] != v[1]}
    if not bad:
        return Verdict.ok()
    return Verdict.violated("; ".join(f"{k}: cli={c} display={d}" for k, (c, d) in sorted(bad.items())))


def check_display_not_falsely_changed(cli: str, display: str) -> Verdict:
    """The display shows ``changed`` only for a file the CLI would re-ingest (not for a ``done`` one)."""
    if display == "changed" and cli == "done":
        return Verdict.violated("display=changed but cli=done: the CLI skips the file it shows as pending")
    return Verdict.ok()


def check_display_not_falsely_done(cli: str, display: str) -> Verdict:
    """The display shows ``done`` only for a file whose content the CLI also finds ingested."""
    if display == "done" and cli in ("new", "changed"):
        return Verdict.violated(f"display=done but cli={cli}: the shown-as-done file has unseen content")
    return Verdict.ok()


def check_emptiness_agrees(cli: str, display: str) -> Verdict:
    """The CLI and the display agree on whether a source is empty."""
    if (cli == "empty") != (display == "empty"):
        return Verdict.violated(f"cli={cli} display={display}: they disagree on whether the file is empty")
    return Verdict.ok()


def check_no_spurious_reingest(calls_before: int, calls_after: int, unchanged: int) -> Verdict:
    """A scan with no changed source makes no ingest model call."""
    if calls_after == calls_before:
        return Verdict.ok()
    return Verdict.violated(f"{calls_after - calls_before} ingest calls for {unchanged} unchanged sources")


_STRAY = re.compile(r"^#+\s*$", re.MULTILINE)
_FENCE_LINE = re.compile(r"^```.*$", re.MULTILINE)


def has_text(page: str) -> bool:
    """Whether a page's summary has any word character outside fence lines (``#``, rules and fences alone
    do not count, nor the questions section the parser appends, ``---\\n\\n## 待探索问题\\n\\n…``)."""
    cut = page.rfind("---\n\n## 待探索问题\n\n")
    summary = page[:cut] if cut >= 0 else page
    return re.search(r"\w", _FENCE_LINE.sub("", summary)) is not None


def check_sections_kept(result: str | None, expected_facts: Iterable[str]) -> Verdict:
    """A parsed page keeps the facts of every non-question section of the summary."""
    expected = set(expected_facts)
    if not expected:
        return Verdict.ok()
    if result is None:
        return Verdict.violated("a summary with content was rejected")
    lost = sorted(expected - extract_facts(result))
    return Verdict.violated(f"sections lost: {lost}") if lost else Verdict.ok()


def check_no_stray_hash(result: str | None) -> Verdict:
    """A parsed page has no line made only of ``#`` (a heading marker left behind)."""
    m = _STRAY.search(result or "")
    return Verdict.violated(f"a stray {m.group(0).strip()!r} line remains") if m else Verdict.ok()


def check_no_fence_line(result: str | None) -> Verdict:
    """A parsed page has no code-fence line (the wrapper fence is removed whatever its info string)."""
    lines = [ln for ln in (result or "").splitlines() if ln.startswith("```")]
    return Verdict.violated(f"fence line {lines[0]!r} written verbatim") if lines else Verdict.ok()


def check_empty_summary_rejected(result: str | None, has_content: bool) -> Verdict:
    """A summary with no content ahead of its questions writes no page, and one with content ahead of
    them (*has_content*) is not rejected."""
    if not has_content and result is not None:
        return Verdict.violated(f"a summary without content was written as {result!r}")
    if has_content and result is None:
        return Verdict.violated("a summary with content was rejected")
    return Verdict.ok()


def check_parsed_page(result: str | None, expected_facts: Iterable[str], summary_empty: bool) -> Verdict:
    """All four parser checks at once: sections kept, no stray ``#``, no fence line, empty rejected."""
    for v in (
        check_empty_summary_rejected(result, not summary_empty),
        check_sections_kept(result, expected_facts),
        check_no_stray_hash(result),
        check_no_fence_line(result),
    ):
        if not v.holds:
            return v
    return Verdict.ok()


def check_unambiguous_resolution(res: Resolution) -> Verdict:
    """A citation resolves to a page only when exactly one note has that stem."""
    if res.path is not None and len(res.candidates) > 1:
        return Verdict.violated(f"resolved to {res.path} among {list(res.candidates)}")
    return Verdict.ok()


def check_archive_effects(
    page: str | None, log_text: str | None, token_calls: int, question: str, error: str | None = None
) -> Verdict:
    """An archiving query leaves a page, a log entry and a token-log entry, and does not raise."""
    missing = []
    if error:
        missing.append(f"raised {error}")
    if page is None:
        missing.append("no archived page")
    if f"query | {question}" not in (log_text or ""):
        missing.append("no log entry")
    if token_calls == 0:
        missing.append("no token-log entry")
    return Verdict.violated(", ".join(missing)) if missing else Verdict.ok()


def check_flags_honored(
    archived: bool, archive_requested: bool, skipped_calls: int, missing_calls: int = 0
) -> Verdict:
    """``archive`` archives, an unforced ingest of an unchanged file makes no model call, and a forced or
    changed file is ingested (*missing_calls*: files that should have been ingested and were not)."""
    bad = []
    if archive_requested and not archived:
        bad.append("archive=True did not archive")
    if skipped_calls:
        bad.append(f"{skipped_calls} model calls for unchanged files without force")
    if missing_calls:
        bad.append(f"{missing_calls} forced or changed files not ingested")
    return Verdict.violated("; ".join(bad)) if bad else Verdict.ok()


def parsed_sections(result: str | None) -> Sequence[str]:
    """The headings of a parsed page (for readable details)."""
    return re.findall(r"^#+ .*$", result or "", re.MULTILINE)


__all__ = [
    "check_answer_supported",
    "check_archive_effects",
    "check_context_within",
    "check_display_not_falsely_changed",
    "check_display_not_falsely_done",
    "check_distinct_sources_distinct_pages",
    "check_done_records_have_pages",
    "check_emptiness_agrees",
    "check_empty_summary_rejected",
    "check_flags_honored",
    "check_index_entries_resolve",
    "check_no_fence_line",
    "check_no_spurious_reingest",
    "check_no_stray_hash",
    "check_one_page_per_source",
    "check_parsed_page",
    "check_relevant_page_loaded",
    "check_request_has_facts",
    "check_sections_kept",
    "check_snapshot_fresh",
    "check_status_agree",
    "check_unambiguous_resolution",
    "check_unique_index_entries",
    "parse_ingest_response",
    "parsed_sections",
]


def check_query_prefix_cached(requests: Sequence[Any], minimum: int = 1024, increment: int = 128) -> Verdict:
    """always("the query shows the Wiki and the cache serves its stable prefix"): every query request holds
    the fact it asks about (the newest page is loaded) and an index; and each one after the first reads
    from the provider's cache at least half of the system prompt plus index tokens the previous query
    sent, whenever those are enough to be cached (*minimum* plus two *increment*: the previous index's
    last block may close differently, and hits are counted in increments). The index only grows at its
    end between two queries, so a prompt that starts with the system prompt and the index repeats them."""
    import json

    prev: int | None = None
    for r in requests:
        d = json.loads(r.detail)
        kinds, cache = d.get("tokens_by_kind", {}), d.get("cache")
        if cache is None:
            return Verdict.violated(f"request {r.seq} has no provider cache record")
        asked = sorted(r.needed_ids)
        if not kinds.get("index") or any(not r.has_fact(f) for f in asked):
            return Verdict.violated(f"request {r.seq} does not show the index and the page of {asked}")
        if prev is not None and prev >= minimum + 2 * increment and cache["cache_read_tokens"] < prev / 2:
            return Verdict.violated(
                f"request {r.seq}: the cache served {cache['cache_read_tokens']:,} tokens, under half of the "
                f"{prev:,} system-prompt and index tokens the previous query sent"
            )
        prev = kinds.get("system", 0) + kinds.get("index", 0)
    return Verdict.ok()
