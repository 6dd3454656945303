"""Tracecraft's claimed failure modes (fidelity note §3), each with its minimal fix as a switch.

Every claim runs on the in-memory object store and a fresh simulation. The faithful design must yield a
counterexample that Hypothesis finds and shrinks; the fixed variant (``state.Variant`` with the one named
fix) must hold under the same strategy. Examples are plain JSON values (dicts, lists, ints, strings).
Where a claim needs a cheap example, a constant is a parameter of the example (``seen_cap``) while the
model keeps upstream's default.

Strategies are shaped so that the quick profile (40 examples) finds every counterexample and each
example is cheap to draw: an op sequence draws each op from a small alphabet of complete commands
(one choice per op, ``sampled_from``), host writes are numbered lines (only their bytes and order matter),
and independent parameters are drawn as tuples (``_record``) so that a small space is searched
exhaustively. The searches still have to find the failing order: every alphabet also holds the ops
that never fail, and the fixed variants run over the same alphabets.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from hypothesis import strategies as st

from sim.claims import FAITHFUL, Claim, Verdict, claim_factory
from sim.engine import Simulation
from sim.faults import Crash, FaultPlan
from sim.files import MemoryTree
from sim.objects import MemoryStore, PreconditionFailed
from systems.tracecraft import faults as fp
from systems.tracecraft import properties as pr
from systems.tracecraft.model import LEASE_S, Client, FileTailHarness, Tracecraft
from systems.tracecraft.protocol import TracecraftError
from systems.tracecraft.state import Variant

SYSTEM = "tracecraft"
ERRORS = (TracecraftError, Crash, PreconditionFailed)


def _variant(variant: str, fix: str) -> Variant:
    return Variant() if variant == FAITHFUL else Variant.with_fix(fix)


def _tc(sim: Simulation, variant: str, fix: str, **kw: Any) -> Tracecraft:
    return Tracecraft(sim, MemoryStore(), variant=_variant(variant, fix), **kw)


def _try(client: Client, gen: Generator[Any, Any, Any]) -> tuple[bool, Any]:
    """Run one command; (True, result) or (False, error text)."""
    try:
        return True, client.call(gen)
    except ERRORS as exc:
        return False, str(exc)


def _bg(
    sim: Simulation, gen: Generator[Any, Any, Any], out: dict[Any, Any], tag: Any, delay: float = 0.0
) -> None:
    """Start *gen* as a process after *delay*; record (ok, result) in out[tag]."""

    def proc() -> Generator[Any, Any, Any]:
        if delay:
            yield sim.timeout(delay)
        try:
            out[tag] = (True, (yield from gen))
        except ERRORS as exc:
            out[tag] = (False, str(exc))

    sim.process(proc())


def _advance(sim: Simulation, seconds: float) -> None:
    """Run the simulation *seconds* further (no-op for 0)."""
    if seconds > 0:
        sim.run(until=sim.now + seconds)


def _arm(sim: Simulation, specs: list[str]) -> None:
    sim.faults = FaultPlan.parse(specs)


def _record(fields: dict[str, Any]) -> Any:
    """A dict of independent draws, drawn as a tuple: a small finite space is searched exhaustively
    (Hypothesis stops when every choice has been tried; ``fixed_dictionaries`` never reports exhaustion)."""
    keys = list(fields)
    return st.tuples(*fields.values()).map(lambda values: dict(zip(keys, values, strict=True)))


_claim = claim_factory(SYSTEM)


# -- shared mirror helpers -------------------------------------------------------------------------
def _line(n: int) -> str:
    """The n-th JSONL line a host writes: distinct per write, lengths vary (only bytes and order matter)."""
    return '{"n":' + str(n) + ',"t":"' + "xyz"[: n % 4] + '"}\n'


def _host(sim: Simulation, tc: Tracecraft, harness: str = "claude-code") -> tuple[Client, FileTailHarness]:
    home = MemoryTree(mtime=sim.clock("host").seconds)
    return tc.agent("host", home=home), FileTailHarness(harness, home)


def _write(h: FileTailHarness, sid: str, data: bytes) -> None:
    h.tree.append_bytes(h.session_path(sid), data)


def _source(h: FileTailHarness, sid: str) -> bytes:
    p = h.session_path(sid)
    return h.tree.read_bytes(p) if h.tree.exists(p) else b""


# 1 ------------------------------------------------------------------------------------------------
#: One draw per op: (destination, lines): the host appends that many lines to the harness's session s1,
#: then runs ``session mirror`` of s1 into the destination project with that harness's config.
CURSOR_OPS = tuple(
    (dest, lines) for dest in ("A/claude-code", "B/claude-code", "A/codex") for lines in (1, 0, 2)
)


def _cursor_reuse_strategy() -> Any:
    return st.lists(st.sampled_from(CURSOR_OPS), min_size=1, max_size=6)


def _cursor_reuse_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    store = MemoryStore()
    home = MemoryTree()
    v = _variant(variant, "state-scoped")
    tcs = {p: Tracecraft(sim, store, project=p, variant=v) for p in ("A", "B")}
    harnesses = {n: FileTailHarness(n, home) for n in ("claude-code", "codex")}
    flushed: set[str] = set()
    written = 0
    for dest, lines in ops:
        project, hname = dest.split("/")
        for _ in range(lines):
            _write(harnesses[hname], "s1", _line(written).encode())
            written += 1
        c = tcs[project].agent("host", home=home)
        ok, _ = _try(c, c.mirror(harnesses[hname], "s1"))
        if ok:
            flushed.add(dest)
    for dest in sorted(flushed):
        project, hname = dest.split("/")
        c = tcs[project].agent("host", home=home)
        got = c.call(c.transcript(hname, "s1"))
        verdict = pr.check_transcript_is_prefix(got, _source(harnesses[hname], "s1"))
        if not verdict.holds:
            return Verdict.violated(f"{dest}: {verdict.detail}")
    return Verdict.ok()


# 2 ------------------------------------------------------------------------------------------------
#: One draw per op (command, n): the host appends n lines to the session, then the user runs
#: ``session mirror`` or ``session stop``. After the ops the host mirrors once more.
STOP_OPS = (("mirror", 1), ("stop", 0), ("stop", 1))


def _stop_strategy() -> Any:
    return st.lists(st.sampled_from(STOP_OPS), min_size=1, max_size=6)


def _stop_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "stop-keeps-cursor")
    c, h = _host(sim, tc)
    written = 0
    for kind, lines in ops:
        for _ in range(lines):
            _write(h, "s1", _line(written).encode())
            written += 1
        if kind == "mirror":
            _try(c, c.mirror(h, "s1"))
        else:
            _try(c, c.session_stop("s1"))
    _try(c, c.mirror(h, "s1"))  # the host's next mirror (a --follow cycle reloads the state too)
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_is_prefix(got, _source(h, "s1"))


# 3 ------------------------------------------------------------------------------------------------
def _idempotence_strategy() -> Any:
    return _record(
        {
            "ops": st.lists(st.sampled_from(["write", "mirror"]), max_size=8),
            "crash": st.sampled_from(["after_part", "after_meta"]),
            "at": st.integers(1, 4),
        }
    )


def _idempotence_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    _arm(sim, [f"crash@tracecraft.mirror.{ex['crash']}#{ex['at']}"])
    tc = _tc(sim, variant, "mirror-intent")
    c, h = _host(sim, tc)
    for n, kind in enumerate(ex["ops"]):
        if kind == "write":
            _write(h, "s1", _line(n).encode())
        else:
            _try(c, c.mirror(h, "s1"))
    _try(c, c.mirror(h, "s1"))  # the retry after whatever happened
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_is_prefix(got, _source(h, "s1"))


# 4 ------------------------------------------------------------------------------------------------
SECRETS = (
    "AKIAIOSFODNN7EXAMPLE",
    "sk-ant-api03-abcdefghijklmnopqrstuv",
    "hf_" + "q" * 30,
    "ghp_" + "Z" * 30,
    "xoxb-1234567890-abc",
    "Bearer abcdefghijklmnopqrstuvwx",
)


def _redaction_strategy() -> Any:
    return _record(
        {
            "before": st.sampled_from(["", "a", 'x {"b": ', "key=  "]),
            "secret": st.sampled_from(SECRETS),
            "after": st.sampled_from(["", "z", '"}, {"c": 1']),
            "cuts": st.lists(st.integers(0, 60), max_size=3),
        }
    )


def _redaction_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "line-aligned")
    c, h = _host(sim, tc)
    data = ('{"k":"' + ex["before"] + ex["secret"] + ex["after"] + '"}\n').encode()
    cuts = sorted({min(x, len(data)) for x in ex["cuts"]} | {len(data)})
    prev = 0
    for cut in cuts:
        _write(h, "s1", data[prev:cut])
        prev = cut
        _try(c, c.mirror(h, "s1"))
    return pr.check_no_secrets(c.call(c.transcript("claude-code", "s1")))


# 5 ------------------------------------------------------------------------------------------------
def _compact_strategy() -> Any:
    return _record(
        {
            "parts": st.integers(1, 4),
            "keep_tail": st.integers(0, 2),
            "crash": st.sampled_from(["none", "after_merged", "after_meta", "after_delete"]),
        }
    )


def _compact_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    if ex["crash"] != "none":
        _arm(sim, [f"crash@tracecraft.compact.{ex['crash']}"])
    tc = _tc(sim, variant, "compact-manifest")
    c, h = _host(sim, tc)
    lines = [f'{{"n":{i}}}' for i in range(ex["parts"])]
    for ln in lines:
        _write(h, "s1", (ln + "\n").encode())
        c.call(c.mirror(h, "s1"))
    _try(c, c.session_compact("s1", keep_tail=ex["keep_tail"]))
    _, first = c.call(c.session_show("s1", tail=100))
    _try(c, c.session_compact("s1", keep_tail=ex["keep_tail"]))  # the operator re-runs compact
    _, shown = c.call(c.session_show("s1", tail=100))
    verdict = pr.check_lines_equal(shown, lines)
    if verdict.holds:
        return verdict
    return Verdict.violated(f"after the compact show printed {first!r}; re-running it: {verdict.detail}")


# 6 ------------------------------------------------------------------------------------------------
def _meta_strategy() -> Any:
    return _record(
        {
            "parts": st.integers(2, 4),
            "mirror_at": st.integers(0, 12),
            "compact_at": st.integers(0, 12),
        }
    )


def _meta_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "meta-cas", latency=1.0)
    c, h = _host(sim, tc)
    for i in range(ex["parts"]):
        _write(h, "s1", f'{{"n":{i}}}\n'.encode())
        c.call(c.mirror(h, "s1"))
    _write(h, "s1", b'{"n":"late"}\n')
    out: dict[str, Any] = {}
    other = tc.agent("host2", home=h.tree)
    _bg(sim, c.mirror(h, "s1"), out, "mirror", ex["mirror_at"])
    _bg(sim, other.session_compact("s1"), out, "compact", ex["compact_at"])
    sim.run()
    prefix = "sessions/claude-code/s1/"
    meta = tc.bucket.get_json(prefix + "meta.json") or {}
    listed = [(seq, u) for seq, u, _ in c._listed_parts(prefix)]
    ok, merged = out.get("compact", (False, None))
    return pr.check_meta_matches_listing(meta, listed, compacted=ok and merged is not None)


# 7 ------------------------------------------------------------------------------------------------
def _two_mirrors_strategy() -> Any:
    return _record(
        {
            "first": st.integers(0, 2),
            "second_at": st.integers(0, 8),
            "append": st.integers(0, 2),
            "append_at": st.integers(0, 8),
        }
    )


def _two_mirrors_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "part-cond-put", latency=1.0)
    c, h = _host(sim, tc)
    for n in range(ex["first"]):
        _write(h, "s1", _line(n).encode())
    out: dict[str, Any] = {}
    terminal = tc.agent("host", home=h.tree)

    def appender() -> Generator[Any, Any, Any]:
        yield sim.timeout(ex["append_at"])
        for n in range(ex["append"]):
            _write(h, "s1", _line(ex["first"] + n).encode())

    sim.process(appender())
    _bg(sim, c.mirror(h, "s1"), out, 1)
    _bg(sim, terminal.mirror(h, "s1"), out, 2, ex["second_at"])
    sim.run()
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_is_prefix(got, _source(h, "s1"))


# 8 ------------------------------------------------------------------------------------------------
def _seq_strategy() -> Any:
    # A long-lived session whose newest part's seq is within 12 of the 5-digit limit.
    return _record({"base": st.integers(99_988, 99_999), "flushes": st.integers(1, 6)})


def _seq_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "part-seq-wide")
    c, h = _host(sim, tc)
    prefix = "sessions/claude-code/s1/"
    tc.bucket.put_bytes(prefix + f"part-{ex['base']:05d}-00000000.jsonl", b'{"seed":1}\n')
    lines = ['{"seed":1}']
    for i in range(ex["flushes"]):
        lines.append(f'{{"n":{i}}}')
        _write(h, "s1", (lines[-1] + "\n").encode())
        c.call(c.mirror(h, "s1"))
    _, shown = c.call(c.session_show("s1", tail=100))
    return pr.check_lines_equal(shown, lines)


# 9 ------------------------------------------------------------------------------------------------
def _seen_cap_strategy() -> Any:
    return _record(
        {
            "seen_cap": st.integers(1, 6),
            "batches": st.lists(st.integers(0, 8), min_size=1, max_size=4),
            "gap_s": st.sampled_from([1, 100, 400]),
        }
    )


def _seen_cap_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "seen-cap-watermark", seen_cap=ex["seen_cap"])
    alice, bob = tc.agent("alice"), tc.agent("bob")
    shown: list[str] = []
    for n in [*ex["batches"], 0]:
        for i in range(n):
            alice.call(alice.send("bob", f"m{i}"))
            _advance(sim, 1)
        shown += [m.key for m in bob.call(bob.inbox(new=True))]
        _advance(sim, ex["gap_s"])
    return pr.check_shown_at_most_once({"bob": shown})


# 10 -----------------------------------------------------------------------------------------------
def _mail_ops(skews: list[int], extra: tuple[tuple[str, int, int], ...]) -> Any:
    """Lists of (kind, sender, arg), one draw per op: a send by each sender (``("send", 0, d)``: d
    seconds between stamping and the PUT), waits, and *extra*; bob runs ``inbox --new`` after every op."""
    ops = (
        ("send", 0, 0),
        *extra[:1],
        *(("send", i, 0) for i in range(1, len(skews))),
        *extra[1:],
        ("wait", 0, 10),
        ("wait", 0, 700),
    )
    return st.lists(st.sampled_from(ops), min_size=2, max_size=6)


def _skew_strategy() -> Any:
    skews = [0, -120, -600, -900]
    late = (("send", 0, 400), ("wait", 0, 350))  # a late arrival, and a wait inside its delay
    return _record({"skews": st.just(skews), "ops": _mail_ops(skews, late)})


def _mail_run(sim: Simulation, tc: Tracecraft, ex: Any) -> Verdict:
    """Senders with skewed clocks; bob polls ``inbox --new`` after every op (an agent's per-turn check)."""
    senders = []
    for i, skew in enumerate(ex["skews"]):
        sim.clock(f"s{i}").skew(skew)
        senders.append(tc.agent(f"s{i}"))
    bob = tc.agent("bob")
    out: dict[Any, Any] = {}
    shown: list[str] = []
    for n, (kind, who, arg) in enumerate(ex["ops"]):
        if kind == "send":
            _bg(sim, senders[who].send("bob", f"msg{n}", delay=arg), out, n)
            _advance(sim, 1)
        elif kind == "junk":  # a leaf written directly through the backend API, 19 nines
            key = "messages/bob/9999999999999999999_x_00000000.json"
            tc.bucket.put_json(key, {"from": "x", "to": "bob", "message": "junk", "sent_at": "9999"})
        else:
            _advance(sim, arg)
        shown += [m.key for m in bob.call(bob.inbox(new=True))]
    sim.run()
    _advance(sim, 1)
    shown += [m.key for m in bob.call(bob.inbox(new=True))]
    sent = [v[1] for v in out.values() if v[0]]
    return pr.check_all_shown(sent, shown)


def _skew_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    return _mail_run(sim, _tc(sim, variant, "server-order"), ex)


# 11 -----------------------------------------------------------------------------------------------
def _future_strategy() -> Any:
    skews = [0, 30, 3600]
    extra = (("junk", 0, 0), ("send", 0, 120))  # a direct 9999… leaf; an arrival late within the grace
    return _record({"skews": st.just(skews), "ops": _mail_ops(skews, extra)})


def _future_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    return _mail_run(sim, _tc(sim, variant, "future-guard"), ex)


# 12 -----------------------------------------------------------------------------------------------
def _shared_cursor_strategy() -> Any:
    every = st.integers(2, 20)
    return _record(
        {
            "send_every": every,
            "r1_every": every,
            "r2_every": every,
            "r2_pause": st.integers(0, 20),
        }
    )


def _shared_cursor_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    """For 60 s alice sends periodically while two readers with bob's id run --new periodically."""
    horizon = 60
    tc = _tc(sim, variant, "reader-cursor", latency=1.0)
    alice = tc.agent("alice")
    readers = {r: tc.agent("bob", reader=r) for r in ("r1", "r2")}
    readers["r2"].cursor_pause = ex["r2_pause"]  # a reader suspended between display and cursor write
    shown: dict[str, list[str]] = {"r1": [], "r2": []}

    def sender() -> Generator[Any, Any, Any]:
        n = 0
        while sim.now < horizon:
            yield from alice.send("bob", f"m{n}")
            n += 1
            yield sim.timeout(ex["send_every"])

    def reader(r: str) -> Generator[Any, Any, Any]:
        while sim.now < horizon:
            yield sim.timeout(ex[f"{r}_every"])
            shown[r] += [m.key for m in (yield from readers[r].inbox(new=True))]

    sim.process(sender())
    for r in readers:
        sim.process(reader(r))
    sim.run()
    return pr.check_shown_at_most_once(shown)


# 13 -----------------------------------------------------------------------------------------------
AGENT_IDS = ("alice", "team/x", "_x", "a_b", "x/", "c.d")


def _agent_id_strategy() -> Any:
    return st.lists(st.tuples(st.sampled_from(AGENT_IDS), st.sampled_from(["send", "set"])), max_size=5)


def _agent_id_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "validate-agent")
    bob = tc.agent("bob")
    deliveries = []
    for n, (aid, what) in enumerate(ops):
        c = tc.agent(aid)
        if what == "send":
            ok, key = _try(c, c.send("bob", f"hi{n}"))
            if ok:
                lines = bob.call(bob.inbox())
                deliveries.append((f"{aid} send", any(m.key == key for m in lines)))
        else:
            ok, _ = _try(c, c.memory_set("k", f"v{n}"))
            if ok:
                hok, hist = _try(bob, bob.memory_history("k", limit=0))
                deliveries.append((f"{aid} memory set", hok and any(h.endswith(f": v{n}") for h in hist)))
    return pr.check_delivered(deliveries)


# 14 -----------------------------------------------------------------------------------------------
def _live_strategy() -> Any:
    return _record(
        {
            "sets": st.lists(st.tuples(st.sampled_from([0, 1]), st.integers(0, 4)), min_size=1, max_size=4),
            "skew_b": st.sampled_from([0, 0, 5, -5]),
            "crash_at": st.integers(0, 4),
        }
    )


def _live_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    if ex["crash_at"]:
        _arm(sim, [f"crash@tracecraft.memory_set.after_snapshot#{ex['crash_at']}"])
    sim.clock("b").skew(ex["skew_b"])
    tc = _tc(sim, variant, "history-is-live", latency=1.0)
    agents = [tc.agent("a"), tc.agent("b")]
    out: dict[Any, Any] = {}
    for n, (who, at) in enumerate(ex["sets"]):
        _bg(sim, agents[who].memory_set("k", f"v{n}"), out, n, at)
    sim.run()
    reader = tc.agent("r")
    ok_live, live = _try(reader, reader.memory_get("k"))
    ok_hist, hist = _try(reader, reader.memory_history("k", limit=1))
    newest = hist[-1].split(": ", 1)[1] if ok_hist and hist else None
    return pr.check_live_is_newest(live if ok_live else None, newest)


# 14b ----------------------------------------------------------------------------------------------
def _immutability_strategy() -> Any:
    # (op, i): a CLI ``memory set k``, or a direct backend put/delete of the i-th listed snapshot.
    ops = [(kind, i) for i in range(3) for kind in ("set", "direct_put", "direct_delete")]
    return st.lists(st.sampled_from(ops), max_size=6)


def _immutability_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "history-worm")
    a = tc.agent("a")
    before: list[str] = []
    for n, (kind, i) in enumerate(ops):
        snaps = sorted(k for k in tc.bucket.list_keys("memory/_history/k/"))
        if kind == "set":
            _try(a, a.memory_set("k", f"v{n}"))
        elif snaps:
            key = snaps[i % len(snaps)]
            if kind == "direct_put":
                _try(a, a.store_put_json(key, {"key": "k", "value": "forged", "set_by": "a", "set_at": "x"}))
            else:
                _try(a, a.store_delete(key))
        ok, after = _try(a, a.memory_history("k", limit=0))
        after = after if ok else []
        verdict = pr.check_history_append_only(before, after)
        if not verdict.holds:
            return verdict
        before = after
    return Verdict.ok()


# 15 -----------------------------------------------------------------------------------------------
def _permanent_strategy() -> Any:
    """After a claims s1: claims, completes (plain, --force, --blocked) by a and b, and waits."""
    ops = [
        ("complete", "b", "force"),
        ("complete", "a", "blocked"),
        ("wait", "", "700"),
        ("claim", "b", ""),
        ("complete", "a", ""),
        ("claim", "a", ""),
        ("complete", "b", ""),
        ("wait", "", "100"),
    ]
    return st.lists(st.sampled_from(ops), min_size=2, max_size=6).map(lambda xs: [("claim", "a", ""), *xs])


def _permanent_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "claim-lease")
    agents = {n: tc.agent(n) for n in ("a", "b")}
    forced_by: str | None = None
    overridden: str | None = None  # the claim owner whose step another agent forced
    claimed_since_force: set[str] = set()
    last_claim_at: float | None = None
    for kind, who, arg in ops:
        if kind == "wait":
            _advance(sim, int(arg))
            continue
        c = agents[who]
        if kind == "claim":
            status = tc.bucket.get_json("steps/s1/status.json") or {}
            owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
            expired = last_claim_at is not None and sim.now - last_claim_at > LEASE_S and owner != who
            ok, msg = _try(c, c.claim("s1"))
            if ok:
                last_claim_at = sim.now
                claimed_since_force.add(who)
            elif expired and status.get("status") != "complete":
                return Verdict.violated(f"{who} cannot take over a claim idle for > {LEASE_S} s: {msg}")
            continue
        force = arg.startswith("force")
        owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
        ok, _ = _try(c, c.complete("s1", force=force, blocked=arg.endswith("blocked")))
        if ok and force:
            forced_by, claimed_since_force = who, set()
            overridden = owner if owner not in (None, who) else None
            last_claim_at = sim.now
        elif ok and overridden == who and who not in claimed_since_force:
            return Verdict.violated(
                f"the original owner {who} overwrote the result {forced_by} forced, without a new claim"
            )
    return Verdict.ok()


# 16 -----------------------------------------------------------------------------------------------
def _regress_strategy() -> Any:
    op = st.tuples(st.sampled_from(["claim", "complete"]), st.sampled_from(["a", "b"]))
    return st.lists(op, max_size=6)


def _regress_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "claim-refuses-terminal")
    agents = {n: tc.agent(n) for n in ("a", "b")}
    for kind, who in ops:
        c = agents[who]
        before = c.call(c.step_status("s1"))[0]
        _try(c, c.claim("s1") if kind == "claim" else c.complete("s1"))
        after = c.call(c.step_status("s1"))[0]
        if kind == "claim" and before == "complete" and after != "complete":
            return Verdict.violated(f"{who}'s claim turned a complete step back into {after}")
    return Verdict.ok()


# 17 -----------------------------------------------------------------------------------------------
STATES = ("complete", "blocked", "needs_review")


def _handoff_order_strategy() -> Any:
    return _record(
        {
            # (state, crash): a's successive ``complete`` calls; crash: a dies inside that call, between
            # its two PUTs (the first such call ends the worker)
            "states": st.lists(
                st.sampled_from([(state, crash) for crash in (False, True) for state in STATES]),
                min_size=1,
                max_size=4,
            ),
            "poll_at": st.lists(st.integers(0, 10), max_size=3),
        }
    )


def _handoff_order_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    crash_at = next((n + 1 for n, (_, crash) in enumerate(ex["states"]) if crash), 0)
    if crash_at:
        point = fp.COMPLETE_AFTER_HANDOFF if variant != FAITHFUL else fp.COMPLETE_AFTER_STATUS
        _arm(sim, [f"crash@{point}#{crash_at}"])
    tc = _tc(sim, variant, "handoff-first", latency=1.0)
    a, w = tc.agent("a"), tc.agent("w")
    a.call(a.claim("s1"))
    seen: list[tuple[Any, Any]] = []

    def worker() -> Generator[Any, Any, Any]:
        for n, (state, _) in enumerate(ex["states"]):
            try:
                yield from a.complete(
                    "s1", note=f"n{n}", blocked=state == "blocked", needs_review=state == "needs_review"
                )
            except ERRORS:
                return  # the process died

    def waiter() -> Generator[Any, Any, Any]:
        for t in [*sorted(ex["poll_at"]), 100]:
            yield sim.timeout(max(0, t - sim.now))
            yield from w._rt()
            status = tc.bucket.get_json("steps/s1/status.json") or {}
            ref = status.get("handoff")
            yield from w._rt()
            handoff = tc.bucket.get_json(f"steps/s1/handoffs/{ref}.json" if ref else "steps/s1/handoff.json")
            seen.append((status, handoff))

    sim.process(worker())
    sim.process(waiter())
    sim.run()
    for status, handoff in seen:
        if status.get("status") != "complete":
            continue
        if handoff is None:
            return Verdict.violated("a waiter saw status complete while the handoff was missing")
        if handoff.get("state") != "complete":
            return Verdict.violated(
                f"a waiter saw status complete with a stale handoff ({handoff.get('state')})"
            )
    return Verdict.ok()


# 18 -----------------------------------------------------------------------------------------------
def _consumer_strategy() -> Any:
    step = st.tuples(st.sampled_from(["", "use the cache", "see report.md"]), st.sampled_from(["b", "c"]))
    return st.lists(step, min_size=1, max_size=3)


def _consumer_check(sim: Simulation, steps: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "handoff-reader")
    a = tc.agent("a")
    deliveries = []
    for i, (note, nxt) in enumerate(steps):
        sid = f"s{i}"
        a.call(a.claim(sid))
        a.call(a.complete(sid, note=note, to=nxt))
        reader = tc.agent(nxt)
        received = reader.call(reader.wait_for([sid]))
        text = " ".join(str(h.get("note")) for h in received.values() if h) + " ".join(reader.stdout)
        if note:
            deliveries.append((f"{sid} note to {nxt}", note in text))
    return pr.check_delivered(deliveries)


# 19 -----------------------------------------------------------------------------------------------
def _liveness_strategy() -> Any:
    op = st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["claim", "send", "set"]),
        st.sampled_from([0, 60, 250, 400]),
    )
    return st.lists(op, max_size=5)


def _liveness_check(sim: Simulation, ops: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "heartbeat-refresh")
    agents = {n: tc.agent(n) for n in ("a", "b")}
    for c in agents.values():
        c.call(c.init())
    last: dict[str, float] = {"a": 0.0, "b": 0.0}
    for n, (who, what, wait) in enumerate(ops):
        _advance(sim, wait)
        c = agents[who]
        cmd = (
            c.claim(f"s{n}")
            if what == "claim"
            else c.send("a", "x")
            if what == "send"
            else c.memory_set("k", "v")
        )
        _try(c, cmd)
        last[who] = sim.now
    _advance(sim, 30)
    obs = tc.agent("observer")
    active = [n for n, t in last.items() if sim.now - t <= 300]
    return pr.check_not_stale(obs.call(obs.agents()), active)


# 20a ----------------------------------------------------------------------------------------------
def _ambiguity_strategy() -> Any:
    return st.lists(
        st.tuples(st.sampled_from(["claude-code", "codex", "openclaw"]), st.sampled_from(["s1", "s2"])),
        min_size=1,
        max_size=4,
    )


def _ambiguity_check(sim: Simulation, sessions: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "require-harness")
    c = tc.agent("host")
    holders: dict[str, set[str]] = {}
    for hname, sid in sessions:  # one host per harness, so their mirror states never interact
        h = FileTailHarness(hname, MemoryTree())
        sid_full = sid if hname != "openclaw" else f"main__{sid}"
        _write(h, sid_full, f'{{"h":"{hname}"}}\n'.encode())
        host = tc.agent("host", home=h.tree)
        host.call(host.mirror(h, sid_full))
        holders.setdefault(sid_full, set()).add(hname)
    for sid, hs in sorted(holders.items()):
        ok, res = _try(c, c.session_show(sid))
        if ok and len(hs) > 1:
            return Verdict.violated(f"show {sid} silently picked {res[0].get('harness')} of {sorted(hs)}")
    return Verdict.ok()


# 20b ----------------------------------------------------------------------------------------------
def _artifact_strategy() -> Any:
    steps = [None, "shared", "A.1", "a-1", "a.1", "s2"]
    uploads = [(step, name) for name in ("r.txt", "plan.md") for step in steps]
    return st.lists(st.sampled_from(uploads), min_size=1, max_size=5)


def _artifact_check(sim: Simulation, uploads: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "artifact-namespace")
    a = tc.agent("a")
    latest: dict[tuple[Any, str], bytes] = {}
    for n, (step, name) in enumerate(uploads):
        body = f"upload {n}".encode()
        a.call(a.artifact_upload(name, body, step))
        latest[(step, name)] = body
    for (step, name), body in latest.items():
        got = a.call(a.artifact_download(name, step))
        if got != body:
            return Verdict.violated(
                f"{name} of {step or 'the pool'} was overwritten by another address: {got!r}"
            )
    return Verdict.ok()


# 21 -----------------------------------------------------------------------------------------------
def _hf_strategy() -> Any:
    """Claimants start *gaps* seconds after one another (2.0 s first: the staggered control)."""
    return _record(
        {
            "gaps": st.lists(st.sampled_from([2.0, 1.0, 0.5, 0.0]), min_size=1, max_size=4),
            "latency": st.sampled_from([0.25, 1.0]),
        }
    )


def _hf_check(sim: Simulation, ex: Any, variant: str) -> Verdict:
    tc = _tc(sim, variant, "conditional-backend", backend="hf", latency=ex["latency"])
    out: dict[Any, Any] = {}
    starts = [0.0]
    for gap in ex["gaps"]:
        starts.append(starts[-1] + gap)
    for i, t in enumerate(starts):
        c = tc.agent(f"agent{i}")
        _bg(sim, c.claim("s1"), out, c.agent_id, t)
    sim.run()
    owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
    return pr.check_single_winner({k: v[0] for k, v in out.items()}, owner)


CLAIMS: list[Claim] = [
    _claim(
        "mirror-cursor-reuse",
        ("MEM-OBJ-mirror-state", "RT-RTE-session-mirror"),
        "The mirror state is keyed by session id only: a second project or harness resumes from another "
        "destination's cursor and never receives the first bytes.",
        "state-scoped",
        _cursor_reuse_strategy,
        _cursor_reuse_check,
    ),
    _claim(
        "stop-deletes-cursor",
        ("MEM-OBJ-mirror-state", "RT-RTE-session-mirror"),
        "`session stop` deletes the local cursor, so the next mirror uploads the whole file again.",
        "stop-keeps-cursor",
        _stop_strategy,
        _stop_check,
    ),
    _claim(
        "mirror-not-idempotent",
        ("RT-CLM-mirror-idempotence", "MEM-OBJ-session-parts"),
        "A crash after the part PUT or the meta PUT makes the retry upload the same bytes again.",
        "mirror-intent",
        _idempotence_strategy,
        _idempotence_check,
    ),
    _claim(
        "redaction-per-chunk",
        ("RT-CLM-secret-redaction", "MEM-OBJ-session-parts"),
        "Redaction runs per flushed chunk: a secret split across two flushes is stored unredacted.",
        "line-aligned",
        _redaction_strategy,
        _redaction_check,
    ),
    _claim(
        "compact-duplicates",
        ("RT-RTE-session-compact", "MEM-OBJ-session-meta"),
        "An interrupted compact leaves the merged part and the originals, show prints the content "
        "twice, and a second compact makes the duplicate permanent.",
        "compact-manifest",
        _compact_strategy,
        _compact_check,
    ),
    _claim(
        "meta-lost-update",
        ("MEM-OBJ-session-meta", "RT-RTE-session-compact"),
        "meta.json is rebuilt read-modify-write with no CAS: a mirror racing a compact loses its parts-log "
        "entry, or the flush drops the compact's last_compacted_at.",
        "meta-cas",
        _meta_strategy,
        _meta_check,
    ),
    _claim(
        "two-mirrors",
        ("RT-CLM-mirror-idempotence", "RT-RTE-session-mirror"),
        "Two mirrors of one session read the same cursor and both upload the same bytes.",
        "part-cond-put",
        _two_mirrors_strategy,
        _two_mirrors_check,
    ),
    _claim(
        "part-seq-overflow",
        ("MEM-OBJ-session-parts",),
        "Part seq 100000 has 6 digits and fails PART_RE: show never prints the bytes flushed into it.",
        "part-seq-wide",
        _seq_strategy,
        _seq_check,
    ),
    _claim(
        "seen-cap-replay",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "More unseen keys within the grace window than SEEN_CAP: the next --new shows the evicted oldest "
        "keys again.",
        "seen-cap-watermark",
        _seen_cap_strategy,
        _seen_cap_check,
    ),
    _claim(
        "skew-hides-mail",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange", "MEM-OBJ-message-content"),
        "A sender clock more than 300 s slow, or a late arrival, stamps a key below the reader's "
        "watermark: --new never shows it.",
        "server-order",
        _skew_strategy,
        _skew_check,
    ),
    _claim(
        "future-key-blinds",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "One future-stamped key lifts the watermark above all correct mail: --new goes blind.",
        "future-guard",
        _future_strategy,
        _future_check,
    ),
    _claim(
        "shared-cursor-reshow",
        ("MEM-OBJ-inbox-cursor",),
        "Readers sharing one agent id overwrite one cursor (last writer wins): mail is shown again.",
        "reader-cursor",
        _shared_cursor_strategy,
        _shared_cursor_check,
    ),
    _claim(
        "unvalidated-agent-id",
        ("RT-OBJ-config", "MEM-OBJ-message-content", "MEM-OBJ-memory-history"),
        "Agent ids are never validated: an id with '/' sends mail nobody sees and writes history that "
        "`memory history` cannot show.",
        "validate-agent",
        _agent_id_strategy,
        _agent_id_check,
    ),
    _claim(
        "history-newest-not-live",
        ("MEM-OBJ-memory-history", "MEM-OBJ-memory-live", "RT-RTE-memory-write"),
        "Snapshot and live writes are separate: the newest history entry need not be the live value.",
        "history-is-live",
        _live_strategy,
        _live_check,
    ),
    _claim(
        "history-not-immutable",
        ("MEM-CLM-history-immutability", "RT-CMP-get-store"),
        "'No version is ever lost' is not enforced: the backend API overwrites or deletes snapshots.",
        "history-worm",
        _immutability_strategy,
        _immutability_check,
    ),
    _claim(
        "permanent-claim",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "A claim never expires and `complete --force` leaves it: the step cannot be reclaimed and the "
        "original owner can overwrite the forced result.",
        "claim-lease",
        _permanent_strategy,
        _permanent_check,
    ),
    _claim(
        "completed-step-regresses",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "An unclaimed step can be completed, then claimed: the unconditional status PUT turns complete "
        "back into in_progress.",
        "claim-refuses-terminal",
        _regress_strategy,
        _regress_check,
    ),
    _claim(
        "status-before-handoff",
        ("MEM-OBJ-handoff", "RT-RTE-step-control", "RT-BAP-step-polling"),
        "complete writes status before the handoff: a waiter sees complete with the handoff missing "
        "or stale.",
        "handoff-first",
        _handoff_order_strategy,
        _handoff_order_check,
    ),
    _claim(
        "handoff-no-consumer",
        ("MEM-OBJ-handoff", "RT-BAP-step-polling"),
        "No command reads the handoff: the next agent's wait-for never delivers the note.",
        "handoff-reader",
        _consumer_strategy,
        _consumer_check,
    ),
    _claim(
        "registration-not-liveness",
        ("MEM-OBJ-agent-registration", "RT-RTE-init-config"),
        "The heartbeat is written at init only: an agent working now is reported stale after 300 s.",
        "heartbeat-refresh",
        _liveness_strategy,
        _liveness_check,
    ),
    _claim(
        "session-id-ambiguity",
        ("MEM-OBJ-session-meta", "RT-CMP-harness-registry"),
        "show/stop/compact take the first harness holding a session id and say nothing.",
        "require-harness",
        _ambiguity_strategy,
        _ambiguity_check,
    ),
    _claim(
        "artifact-collision",
        ("MEM-OBJ-artifact-file", "RT-RTE-artifact-share"),
        "Artifact addresses collide: a step named 'shared' is the pool, and step ids fold case and '.'.",
        "artifact-namespace",
        _artifact_strategy,
        _artifact_check,
    ),
    _claim(
        "hf-racy-claims",
        ("RT-CMP-get-store", "RT-OBJ-step-state", "MEM-RTE-evaluator-readback"),
        "On the HF backend the conditional claim is exists-then-write: concurrent claimants all win.",
        "conditional-backend",
        _hf_strategy,
        _hf_check,
    ),
]
