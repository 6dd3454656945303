"""Named invariants of the MerchantBench model as pure checkers: ``check_x(...) -> Verdict``, never raising.

Each takes plain values (messages, texts, trace records, logs) so it can be tested on hand-written
histories; the claims feed them what a run recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from sim.claims import Verdict
from sim.text import extract_facts
from sim.trace import OpRecord, RequestRecord
from systems.merchantbench.model import is_maintenance, parse_history_entries, provider_text


def _facts(messages: Iterable[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for m in messages:
        out |= extract_facts(provider_text(m))
    return out


def check_facts_recoverable(
    observed: Iterable[str], history: Sequence[dict[str, Any]], document: str
) -> Verdict:
    """always("facts recoverable"): every observed fact id is in the history or in the memory document."""
    missing = sorted(set(observed) - _facts(history) - extract_facts(document))
    if missing:
        return Verdict.violated(f"facts neither in history nor in the document: {missing}")
    return Verdict.ok()


def check_read_results_delivered(
    request_log: Sequence[tuple[int, list[dict[str, Any]], int, bool]],
    act_log: Sequence[tuple[int, int, list[dict[str, Any]], str, list[dict[str, Any]]]],
) -> Verdict:
    """always("read delivered"): the request right after a successful non-empty ``read_memory_doc`` carries
    that call's tool message. *request_log* rows are (t, messages, dropped, pending) in hop order;
    *act_log* rows are (t, hop count when sent, calls, status, results)."""
    for t, hop, calls, status, results in act_log:
        if status != "ok":
            continue
        for call, result in zip(calls, results):
            if call["function"]["name"] != "read_memory_doc" or not result.get("content"):
                continue
            if hop >= len(request_log) or request_log[hop][0] != t:
                continue  # the step ended with this act
            nxt = request_log[hop][1]
            if not any(m.get("role") == "tool" and m.get("tool_call_id") == call["id"] for m in nxt):
                return Verdict.violated(
                    f"t={t}: read result {call['id']} missing from the next request ({len(nxt)} messages)"
                )
    return Verdict.ok()


def check_observation_survives_compaction(ops: Sequence[OpRecord]) -> Verdict:
    """always("observation kept"): every compaction leaves a non-empty history holding the current step's
    observation (the ``compact`` op records both)."""
    for op in ops:
        d = op.data
        if op.op == "compact" and not (d.get("after") and d.get("obs_kept")):
            return Verdict.violated(
                f"t={d.get('t')}: compaction left {d.get('after')} messages "
                f"(from {d.get('before')}) without the step's observation"
            )
    return Verdict.ok()


def check_compaction_keeps_history(ops: Sequence[OpRecord]) -> Verdict:
    """always("compaction keeps a history"): no compaction leaves ``history == []`` (the ``compact`` op
    records the lengths before and after)."""
    for op in ops:
        d = op.data
        if op.op == "compact" and not d.get("after"):
            return Verdict.violated(
                f"t={d.get('t')}: compaction emptied the history ({d.get('before')} messages -> []): "
                "observation, reminder and save all gone"
            )
    return Verdict.ok()


def check_request_ceiling(requests: Sequence[RequestRecord], window: int) -> Verdict:
    """always("within window"): every request's exact provider token count is at most *window*."""
    over = [(r.seq, r.exact_tokens, r.estimate) for r in requests if r.exact_tokens > window]
    if over:
        seq, exact, est = over[0]
        return Verdict.violated(
            f"request {seq}: {exact} provider tokens > window {window} "
            f"(design estimate {est}); {len(over)} over"
        )
    return Verdict.ok()


def check_no_silent_drop(request_log: Sequence[tuple[int, list[dict[str, Any]], int, bool]]) -> Verdict:
    """always("no silent slide"): a request that leaves history messages out is sent only while a
    compaction reminder is pending (the model was warned)."""
    for t, msgs, dropped, pending in request_log:
        if dropped > 0 and not pending:
            return Verdict.violated(
                f"t={t}: request dropped {dropped} history messages with no reminder "
                f"pending ({len(msgs)} sent)"
            )
    return Verdict.ok()


def check_compactions_saw_reminder(ops: Sequence[OpRecord]) -> Verdict:
    """always("warned before compaction"): every compaction follows a request that showed the reminder or
    notice."""
    for op in ops:
        if op.op == "compact" and not op.data.get("reminder_seen"):
            return Verdict.violated(f"t={op.data.get('t')}: compaction after a request without the reminder")
    return Verdict.ok()


def check_no_compaction_after_failed_write(ops: Sequence[OpRecord]) -> Verdict:
    """always("failed save keeps context"): no compaction in a cycle whose write attempt failed and no
    write succeeded."""
    for op in ops:
        d = op.data
        if op.op == "compact" and d.get("write_failed") and not d.get("saved"):
            return Verdict.violated(f"t={d.get('t')}: compacted after a failed write, nothing saved")
    return Verdict.ok()


def check_writes_applied(sent: Sequence[str], document: str | None, versions: Sequence[int]) -> Verdict:
    """always("every write lands"): the document is the last content sent and the history has one entry
    per write sent."""
    if not sent:
        return Verdict.ok()
    if document != sent[-1]:
        return Verdict.violated(f"document is {document!r}, last write sent was {sent[-1]!r}")
    if len(versions) != len(sent):
        return Verdict.violated(f"{len(sent)} writes sent, {len(versions)} history entries")
    return Verdict.ok()


def check_tool_results_intact(
    history: Sequence[dict[str, Any]], server_results: Iterable[str], names: Iterable[str] | None = None
) -> Verdict:
    """always("results intact"): every tool message in history (of a tool in *names*, when given) carries a
    result the server returned."""
    returned = set(server_results)
    wanted = None if names is None else set(names)
    for i, m in enumerate(history):
        if m.get("role") != "tool" or (wanted is not None and m.get("name") not in wanted):
            continue
        if m.get("content") not in returned:
            return Verdict.violated(
                f"history[{i}] ({m.get('name')}) holds {str(m.get('content'))[:60]!r}, not a server result"
            )
    return Verdict.ok()


def check_documents_isolated(reads: dict[str, str], written: dict[str, str]) -> Verdict:
    """always("isolation"): each agent reads back the content it wrote last."""
    for aid, content in written.items():
        if reads.get(aid) != content:
            return Verdict.violated(f"agent {aid!r} wrote {content!r} but reads {reads.get(aid)!r}")
    return Verdict.ok()


def check_history_append_only(before: bytes, after: bytes) -> Verdict:
    """always("history append-only"): a history file only grows; its old bytes stay a prefix."""
    if not after.startswith(before):
        return Verdict.violated(
            f"history rewritten: {len(before)} bytes before, {len(after)} after, old content not a prefix"
        )
    return Verdict.ok()


def check_versions_consecutive(versions: Sequence[int]) -> Verdict:
    """always("versions 1..n"): the history's version labels are 1, 2, ..., n."""
    if list(versions) != list(range(1, len(versions) + 1)):
        return Verdict.violated(f"version labels {list(versions)}")
    return Verdict.ok()


def check_document_committed(document: bytes | None, history: bytes) -> Verdict:
    """always("document is a committed version"): the document is missing, empty, or the body of some
    history entry."""
    if not document:
        return Verdict.ok()
    bodies = {body for _, body in parse_history_entries(history)}
    if document not in bodies:
        return Verdict.violated(f"document ({len(document)} bytes) has no history entry")
    return Verdict.ok()


def check_roundtrip(written: str, read: dict[str, Any], write_result: dict[str, Any]) -> Verdict:
    """always("round trip"): reading returns exactly what was written, with the same byte count."""
    if read.get("content") != written or read.get("bytes") != write_result.get("bytes"):
        return Verdict.violated(
            f"wrote {written!r} ({write_result.get('bytes')} bytes), read "
            f"{read.get('content')!r} ({read.get('bytes')} bytes)"
        )
    return Verdict.ok()


def check_probe_in_context(requests: Sequence[RequestRecord], known: Iterable[str]) -> Verdict:
    """always("probe answered from context"): a probe's first request holds the needed fact whenever the
    fact is in *known* (e.g. the run's step traces)."""
    available = set(known)
    seen_steps: set[int] = set()
    for r in requests:
        needed = r.needed_ids
        if not needed:
            continue
        t = json.loads(r.detail).get("t")
        if t in seen_steps:
            continue
        seen_steps.add(t)
        missing = (needed & available) - r.fact_ids
        if missing:
            return Verdict.violated(
                f"t={t}: probe for {sorted(missing)} not in the request, but in the traces"
            )
    return Verdict.ok()


def check_maintenance_text(messages: Sequence[dict[str, Any]]) -> Verdict:
    """sometimes("warned"): some message is a compaction reminder or notice (reachability)."""
    if any(is_maintenance(m) for m in messages):
        return Verdict.ok()
    return Verdict.violated("no reminder or notice")
