"""Named invariants of the MerchantBench model as pure checkers: ``check_x(...) -> Verdict``, never raising.

Each takes plain values (messages, texts, logs, trace records) so it can be tested on hand-written
histories; the drivers feed them what a run recorded. Every property asserts the service of the feature
under its claim (the window stays bounded *and* nothing is lost, the document *is* shown, every write
*lands*), so a design with that feature switched off fails it as the faithful design does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim.claims import Verdict
from sim.text import extract_facts
from sim.trace import OpRecord, RequestRecord
from systems.merchantbench.model import is_maintenance, message_token_estimate, parse_history_entries
from systems.merchantbench.model import provider_text as _text
from systems.merchantbench.state import Compaction, SentRequest

ActLog = Sequence[tuple[int, int, list[dict[str, Any]], str, list[Any]]]
"""(t, requests logged before the act, calls, status, results) per act, in order."""


def _facts(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for t in texts:
        out |= extract_facts(t)
    return out


def _body(req: SentRequest) -> list[dict[str, Any]]:
    return [m for m in req.messages if m.get("role") != "system"]


def check_cycles_complete(ops: Sequence[OpRecord], last_t: int) -> Verdict:
    """always("compaction happens"): a reminder that fires at tick t (before the run's last tick) is
    resolved by the end of tick t+1: the history is compacted, or the cycle is cleared without one (a
    failed forced end-of-step, or a 425 under the fix, re-arms the trigger), or the trigger fires again."""
    ends = ("compact", "compaction_trigger", "compaction_cleared")
    for k, op in enumerate(ops):
        if op.op != "compaction_trigger" or op.data.get("t", 0) >= last_t:
            continue
        t = op.data.get("t", 0)
        nxt = next((o for o in ops[k + 1 :] if o.op in ends), None)
        if nxt is None or nxt.data.get("t", 0) > t + 1:
            return Verdict.violated(f"t={t}: the reminder fired and no compaction followed by t={t + 1}")
    return Verdict.ok()


def check_compaction_service(
    ops: Sequence[OpRecord], compactions: Sequence[Compaction], last_t: int
) -> Verdict:
    """always("compaction keeps facts"): compactions happen (:func:`check_cycles_complete`), and every fact
    in the history just before a compaction is in the history after it or in the memory document then."""
    cycles = check_cycles_complete(ops, last_t)
    if not cycles.holds:
        return cycles
    for c in compactions:
        lost = _facts(c.before) - _facts(_text(m) for m in c.after) - extract_facts(c.document)
        if lost:
            return Verdict.violated(
                f"t={c.t}: compaction dropped {sorted(lost)}: in neither the history nor the document"
            )
    return Verdict.ok()


def check_compaction_keeps_step(
    ops: Sequence[OpRecord],
    compactions: Sequence[Compaction],
    observations: Mapping[int, str],
    keep: int,
    last_t: int,
) -> Verdict:
    """always("compaction keeps the step"): compactions happen, and each leaves a history that holds the
    observation of its step and is within K plus the user messages it keeps (the observation, a reminder)."""
    cycles = check_cycles_complete(ops, last_t)
    if not cycles.holds:
        return cycles
    for c in compactions:
        obs = observations.get(c.t)
        users = sum(message_token_estimate(m) for m in c.after if m.get("role") == "user")
        if obs is not None and not any(m.get("role") == "user" and m.get("content") == obs for m in c.after):
            return Verdict.violated(
                f"t={c.t}: compaction left {len(c.after)} messages without the step's observation"
            )
        if c.after_total > keep + users:
            return Verdict.violated(f"t={c.t}: compaction kept {c.after_total} estimated tokens > K={keep}")
    return Verdict.ok()


def check_read_delivered(
    request_log: Sequence[SentRequest], act_log: ActLog, fact: str, question: str
) -> Verdict:
    """always("read delivered"): the request right after a successful ``read_memory_doc`` (same step) shows
    the step's question and, in that call's tool result after the call itself, the document's *fact*."""
    for t, before, calls, status, results in act_log:
        if status != "ok" or before >= len(request_log) or request_log[before].t != t:
            continue
        for call, result in zip(calls, results):
            if call["function"]["name"] != "read_memory_doc" or not isinstance(result, dict):
                continue
            msgs = request_log[before].messages
            call_at = next(
                (
                    i
                    for i, m in enumerate(msgs)
                    if any(c.get("id") == call["id"] for c in m.get("tool_calls") or ())
                ),
                None,
            )
            shown = call_at is not None and any(
                m.get("role") == "tool"
                and m.get("tool_call_id") == call["id"]
                and fact in str(m.get("content"))
                for m in msgs[call_at:]
            )
            asked = any(m.get("role") == "user" and question in str(m.get("content")) for m in msgs)
            if not (shown and asked):
                what = "the document" if not shown else "the question"
                return Verdict.violated(f"t={t}: the request after read {call['id']} does not show {what}")
    return Verdict.ok()


def check_window_service(
    requests: Sequence[RequestRecord],
    request_log: Sequence[SentRequest],
    window: int,
    observations: Mapping[int, str],
) -> Verdict:
    """always("within window, observation shown"): every request's exact provider count is at most
    *window*, and every request shows its step's observation (whole, or a clipped prefix of it)."""
    over = [(r.seq, r.exact_tokens, r.estimate) for r in requests if r.exact_tokens > window]
    if over:
        seq, exact, est = over[0]
        return Verdict.violated(
            f"request {seq}: {exact} provider tokens > window {window} (design estimate {est}); "
            f"{len(over)} over"
        )
    for req in request_log:
        obs = observations.get(req.t, "")
        if not any(
            m.get("role") == "user" and m.get("content") and obs.startswith(str(m["content"]))
            for m in req.messages
        ):
            return Verdict.violated(f"t={req.t}: a request without the step's observation")
    return Verdict.ok()


def check_no_silent_drop(
    request_log: Sequence[SentRequest], requests: Sequence[RequestRecord], budget: int
) -> Verdict:
    """always("no silent slide"): a request keeps its history within B (by the design's estimate, or the
    whole request by the provider's exact count; a lone message may be over), and a request that leaves
    history messages out shows a reminder (the model was warned). *requests* are the recorded requests,
    one per entry of *request_log*."""
    for req, rec in zip(request_log, requests):
        body = _body(req)
        cost = sum(message_token_estimate(m) for m in body)
        if cost > budget and rec.exact_tokens > budget and len(body) > 1:
            return Verdict.violated(f"t={req.t}: request history {cost} estimated tokens > B={budget}")
        if req.dropped > 0 and not any(is_maintenance(m) for m in body):
            return Verdict.violated(
                f"t={req.t}: request dropped {req.dropped} history messages with no reminder shown "
                f"({len(req.messages)} sent)"
            )
    return Verdict.ok()


def check_compactions_warned(ops: Sequence[OpRecord], last_t: int) -> Verdict:
    """always("warned before compaction"): compactions happen (:func:`check_cycles_complete`), and each
    follows a request that showed the reminder or notice."""
    cycles = check_cycles_complete(ops, last_t)
    if not cycles.holds:
        return cycles
    for op in ops:
        if op.op == "compact" and not op.data.get("reminder_seen"):
            return Verdict.violated(f"t={op.data.get('t')}: compaction after a request without the reminder")
    return Verdict.ok()


def check_writes_applied(sent: Sequence[str], document: str | None, versions: Sequence[int]) -> Verdict:
    """always("every write lands once"): the document is the last content sent and the history has exactly
    one entry per write sent (a resent request is not a second write)."""
    if not sent:
        return Verdict.ok()
    if document != sent[-1]:
        return Verdict.violated(f"document is {document!r}, last write sent was {sent[-1]!r}")
    if len(versions) != len(sent):
        return Verdict.violated(f"{len(sent)} writes sent, {len(versions)} history entries")
    return Verdict.ok()


def check_read_kept(
    request_log: Sequence[SentRequest],
    act_log: ActLog,
    fact: str,
    history: Sequence[dict[str, Any]],
    server_results: Iterable[str],
) -> Verdict:
    """always("read kept"): after the first successful ``read_memory_doc`` every later request (a
    Forbidden retry excepted) shows the document's *fact*, and every ``read_memory_doc`` tool message in
    history carries a result the server returned."""
    first = next(
        (
            (t, before)
            for t, before, calls, status, _ in act_log
            if status == "ok" and any(c["function"]["name"] == "read_memory_doc" for c in calls)
        ),
        None,
    )
    if first is not None:
        for req in request_log[first[1] :]:
            if not req.retry and fact not in json.dumps(req.messages, ensure_ascii=False):
                return Verdict.violated(f"t={req.t} hop {req.hop}: the document read at t={first[0]} is gone")
    returned = set(server_results)
    for i, m in enumerate(history):
        if (
            m.get("role") == "tool"
            and m.get("name") == "read_memory_doc"
            and m.get("content") not in returned
        ):
            return Verdict.violated(
                f"history[{i}] (read_memory_doc) holds {str(m.get('content'))[:60]!r}, not a server result"
            )
    return Verdict.ok()


def check_documents_isolated(reads: dict[str, str], written: dict[str, str]) -> Verdict:
    """always("isolation"): each agent reads back the content it wrote last."""
    for aid, content in written.items():
        if reads.get(aid) != content:
            return Verdict.violated(f"agent {aid!r} wrote {content!r} but reads {reads.get(aid)!r}")
    return Verdict.ok()


def check_own_history(
    histories: Mapping[str, tuple[bytes, bytes]], bodies: Mapping[str, list[str]]
) -> Verdict:
    """always("own history, append-only"): each agent's history file parses to exactly its own writes,
    numbered 1..n, and grew only by appending (*histories* maps an id to its file before and after the
    other agent's write)."""
    for aid, (before, after) in histories.items():
        if not after.startswith(before):
            return Verdict.violated(
                f"{aid!r}: history rewritten ({len(before)} -> {len(after)} bytes): old content lost"
            )
        got = [(v, body.decode("utf-8", "replace")) for v, body in parse_history_entries(after)]
        want = [(i + 1, b) for i, b in enumerate(bodies[aid])]
        if got != want:
            return Verdict.violated(f"{aid!r}: history entries {got} != its writes {want}")
    return Verdict.ok()


def check_versions_recorded(entries: Sequence[tuple[int, bytes]], bodies: Sequence[str]) -> Verdict:
    """always("versions 1..n"): the history holds one entry per write, labelled 1, 2, ..., n, with the
    written bodies in order."""
    got = [(v, b.decode("utf-8", "replace")) for v, b in entries]
    want = [(i + 1, b) for i, b in enumerate(bodies)]
    if got != want:
        return Verdict.violated(f"history entries {got} != writes {want}")
    return Verdict.ok()


def check_document_committed(
    document: bytes | None, history: bytes, committed: Sequence[str], interrupted: str | None
) -> Verdict:
    """always("document is the last committed version"): after writes that returned ok (*committed*) and
    possibly one interrupted by a crash or failure, the document is the last committed body or the
    interrupted one, and it is recorded in the history; with nothing committed it is missing or the
    recorded interrupted body."""
    bodies = {body for _, body in parse_history_entries(history)}
    allowed = {
        b.encode("utf-8")
        for b in ([committed[-1]] if committed else []) + ([interrupted] if interrupted else [])
    }
    if document is None:
        if committed:
            return Verdict.violated(f"no document after {len(committed)} committed writes")
        return Verdict.ok()
    if document not in allowed:
        return Verdict.violated(
            f"document ({len(document)} bytes) is neither the last nor the interrupted write"
        )
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
    fact is in *known* (the run's step traces hold every fact observed)."""
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


def check_cache_served(requests: Sequence[RequestRecord], window: int, min_ratio: float) -> Verdict:
    """always("the window is bounded and the prompt cache serves the history"): every request's history
    (its exact tokens past the system prompt and tool schemas) is within *window*; and over the requests
    after the first one that left history out (the window is full), cache reads cover at least
    *min_ratio* of the history tokens sent. A trim that moves the request's first message at every hop
    leaves the cache only the system prompt and the tool schemas: each request writes its whole kept
    history again, at the cache-write price."""
    rows: list[tuple[int, int, int, int]] = []
    for r in requests:
        d = json.loads(r.detail)
        cache, kinds = d.get("cache"), d.get("tokens_by_kind", {})
        if cache is None:
            return Verdict.violated(f"request {r.seq} has no provider cache record")
        head = kinds.get("system", 0) + kinds.get("tools", 0)
        hist = r.exact_tokens - head
        if hist > window:
            return Verdict.violated(f"request {r.seq}: {hist} history tokens > window {window}")
        rows.append((r.seq, d.get("dropped", 0), hist, max(0, cache["cache_read_tokens"] - head)))
    first = next((k for k, row in enumerate(rows) if row[1] > 0), None)
    tail = rows[first + 1 :] if first is not None else []
    if len(tail) < 2:
        return Verdict.ok("fewer than two requests after the window filled")
    sent, read = sum(t[2] for t in tail), sum(t[3] for t in tail)
    if sent and read < min_ratio * sent:
        return Verdict.violated(
            f"after the window filled (request {rows[first][0] if first is not None else '-'}), the cache "
            f"served {read:,} of {sent:,} history tokens over {len(tail)} requests "
            f"({read / sent:.2f} < {min_ratio})"
        )
    return Verdict.ok()
