"""Drivers of the session-mirror claims (fidelity note §3 items 1–8 and 20a)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.tracecraft import properties as pr
from systems.tracecraft.drivers.common import (
    MODEL,
    Gen,
    World,
    arm,
    attempt,
    background,
    host,
    line,
    listed_parts,
    record,
    source,
    system,
    write,
)
from systems.tracecraft.protocol import redact

# 1 ------------------------------------------------------------------------------------------------
#: One draw per op: (destination, lines): the host appends that many lines to the harness's session s1,
#: then runs ``session mirror`` of s1 into the destination project with that harness's config.
CURSOR_OPS = tuple(
    (dest, lines) for dest in ("A/claude-code", "B/claude-code", "A/codex") for lines in (1, 0, 2)
)


MirrorCursorReuseExample = Annotated[
    list[tuple[Literal["A/claude-code", "B/claude-code", "A/codex"], Literal[0, 1, 2]]],
    Field(min_length=1, max_length=6),
]


def mirror_cursor_reuse_examples() -> Any:
    return st.lists(st.sampled_from(CURSOR_OPS), min_size=1, max_size=6)


def mirror_cursor_reuse(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    store = world.store()
    home = world.tree()
    tcs = {p: world.system(sim, store, project=p, variant=variant) for p in ("A", "B")}
    harnesses = {n: world.harness(n, home) for n in ("claude-code", "codex")}
    flushed: set[str] = set()
    written = 0
    for dest, lines in ops:
        project, hname = dest.split("/")
        for _ in range(lines):
            write(harnesses[hname], "s1", line(written).encode())
            written += 1
        c = tcs[project].agent("host", home=home)
        ok, _ = attempt(c, c.mirror(harnesses[hname], "s1"))
        if ok:
            flushed.add(dest)
    for dest in sorted(flushed):  # each destination flushes once more: its transcript is the whole file
        project, hname = dest.split("/")
        c = tcs[project].agent("host", home=home)
        attempt(c, c.mirror(harnesses[hname], "s1"))
        got = c.call(c.transcript(hname, "s1"))
        verdict = pr.check_transcript_equals(got, source(harnesses[hname], "s1"))
        if not verdict.holds:
            return Verdict.violated(f"{dest}: {verdict.detail}")
    return Verdict.ok()


# 2 ------------------------------------------------------------------------------------------------
#: One draw per op (command, n): the host appends n lines to the session, then the user runs
#: ``session mirror`` or ``session stop``. After the ops the host mirrors once more.
STOP_OPS = (("mirror", 1), ("stop", 0), ("stop", 1))


StopDeletesCursorExample = Annotated[
    list[tuple[Literal["mirror", "stop"], Literal[0, 1]]], Field(min_length=1, max_length=6)
]


def stop_deletes_cursor_examples() -> Any:
    return st.lists(st.sampled_from(STOP_OPS), min_size=1, max_size=6)


def stop_deletes_cursor(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    c, h = host(world, sim, tc)
    written = 0
    for kind, lines in ops:
        for _ in range(lines):
            write(h, "s1", line(written).encode())
            written += 1
        if kind == "mirror":
            attempt(c, c.mirror(h, "s1"))
        else:
            attempt(c, c.session_stop("s1"))
    attempt(c, c.mirror(h, "s1"))  # the host's next mirror (a --follow cycle reloads the state too)
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_equals(got, source(h, "s1"))


# 3 ------------------------------------------------------------------------------------------------
class MirrorNotIdempotentExample(TypedDict):
    ops: Annotated[list[Literal["write", "mirror"]], Field(max_length=8)]
    crash: Literal["after_part", "after_meta"]
    at: Annotated[int, Field(ge=1, le=4)]


def mirror_not_idempotent_examples() -> Any:
    return record(
        {
            "ops": st.lists(st.sampled_from(["write", "mirror"]), max_size=8),
            "crash": st.sampled_from(["after_part", "after_meta"]),
            "at": st.integers(1, 4),
        }
    )


def mirror_not_idempotent(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    arm(sim, [f"crash@tracecraft.mirror.{ex['crash']}#{ex['at']}"])
    tc = system(world, sim, variant)
    c, h = host(world, sim, tc)
    for n, kind in enumerate(ex["ops"]):
        if kind == "write":
            write(h, "s1", line(n).encode())
        else:
            attempt(c, c.mirror(h, "s1"))
    ok, _ = attempt(c, c.mirror(h, "s1"))  # the retry after whatever happened
    if not ok:  # the retry itself crashed (a crash point fires once): the next retry completes
        attempt(c, c.mirror(h, "s1"))
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_equals(got, source(h, "s1"))


# 4 ------------------------------------------------------------------------------------------------
SECRETS = (
    "AKIAIOSFODNN7EXAMPLE",
    "sk-ant-api03-abcdefghijklmnopqrstuv",
    "hf_" + "q" * 30,
    "ghp_" + "Z" * 30,
    "xoxb-1234567890-abc",
    "Bearer abcdefghijklmnopqrstuvwx",
)


class RedactionPerChunkExample(TypedDict):
    before: Literal["", "a", 'x {"b": ', "key=  "]
    secret: Literal[SECRETS]  # type: ignore[valid-type]
    after: Literal["", "z", '"}, {"c": 1']
    cuts: Annotated[list[Annotated[int, Field(ge=0, le=60)]], Field(max_length=3)]


def redaction_per_chunk_examples() -> Any:
    return record(
        {
            "before": st.sampled_from(["", "a", 'x {"b": ', "key=  "]),
            "secret": st.sampled_from(SECRETS),
            "after": st.sampled_from(["", "z", '"}, {"c": 1']),
            "cuts": st.lists(st.integers(0, 60), max_size=3),
        }
    )


def redaction_per_chunk(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    c, h = host(world, sim, tc)
    data = ('{"k":"' + ex["before"] + ex["secret"] + ex["after"] + '"}\n').encode()
    cuts = sorted({min(x, len(data)) for x in ex["cuts"]} | {len(data)})
    prev = 0
    for cut in cuts:
        write(h, "s1", data[prev:cut])
        prev = cut
        attempt(c, c.mirror(h, "s1"))
    got = c.call(c.transcript("claude-code", "s1"))
    verdict = pr.check_no_secrets(got)  # the transcript is whole and redacted, not merely secret-free
    return verdict if not verdict.holds else pr.check_transcript_equals(got, redact(source(h, "s1"))[0])


# 5 ------------------------------------------------------------------------------------------------
class CompactDuplicatesExample(TypedDict):
    parts: Annotated[int, Field(ge=1, le=4)]
    keep_tail: Annotated[int, Field(ge=0, le=2)]
    crash: Literal["none", "after_merged", "after_meta", "after_delete"]


def compact_duplicates_examples() -> Any:
    return record(
        {
            "parts": st.integers(1, 4),
            "keep_tail": st.integers(0, 2),
            "crash": st.sampled_from(["none", "after_merged", "after_meta", "after_delete"]),
        }
    )


def compact_duplicates(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    if ex["crash"] != "none":
        arm(sim, [f"crash@tracecraft.compact.{ex['crash']}"])
    tc = system(world, sim, variant)
    c, h = host(world, sim, tc)
    lines = [f'{{"n":{i}}}' for i in range(ex["parts"])]
    for ln in lines:
        write(h, "s1", (ln + "\n").encode())
        c.call(c.mirror(h, "s1"))
    attempt(c, c.session_compact("s1", keep_tail=ex["keep_tail"]))
    _, first = c.call(c.session_show("s1", tail=100))
    attempt(c, c.session_compact("s1", keep_tail=ex["keep_tail"]))  # the operator re-runs compact
    _, shown = c.call(c.session_show("s1", tail=100))
    verdict = pr.check_lines_equal(shown, lines)
    if not verdict.holds:
        return Verdict.violated(f"after the compact show printed {first!r}; re-running it: {verdict.detail}")
    n, k = ex["parts"], ex["keep_tail"]
    expected = 1 + k if n - k >= 2 else n  # the service: all but the newest K parts merged into one
    logged = len((tc.bucket.get_json("sessions/claude-code/s1/meta.json") or {}).get("parts") or [])
    if logged != expected:
        return Verdict.violated(f"compact --keep-tail {k} of {n} parts left {logged} parts, not {expected}")
    return Verdict.ok()


# 6 ------------------------------------------------------------------------------------------------
class MetaLostUpdateExample(TypedDict):
    parts: Annotated[int, Field(ge=2, le=4)]
    mirror_at: Annotated[int, Field(ge=0, le=12)]
    compact_at: Annotated[int, Field(ge=0, le=12)]


def meta_lost_update_examples() -> Any:
    return record(
        {
            "parts": st.integers(2, 4),
            "mirror_at": st.integers(0, 12),
            "compact_at": st.integers(0, 12),
        }
    )


def meta_lost_update(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant, latency=1.0)
    c, h = host(world, sim, tc)
    for i in range(ex["parts"]):
        write(h, "s1", f'{{"n":{i}}}\n'.encode())
        c.call(c.mirror(h, "s1"))
    write(h, "s1", b'{"n":"late"}\n')
    out: dict[str, Any] = {}
    other = tc.agent("host2", home=h.tree)
    background(sim, c.mirror(h, "s1"), out, "mirror", ex["mirror_at"])
    background(sim, other.session_compact("s1"), out, "compact", ex["compact_at"])
    sim.run()
    prefix = "sessions/claude-code/s1/"
    meta = tc.bucket.get_json(prefix + "meta.json") or {}
    listed = [(seq, u) for seq, u, _ in listed_parts(tc.bucket.list_keys(prefix))]
    ok, merged = out.get("compact", (False, None))
    verdict = pr.check_meta_matches_listing(meta, listed, compacted=ok and merged is not None)
    if not verdict.holds:
        return verdict
    shown_ok, shown = attempt(c, c.session_show("s1", tail=100))  # and the session reads back whole
    want = [f'{{"n":{i}}}' for i in range(ex["parts"])] + ['{"n":"late"}']
    return pr.check_lines_equal(shown[1] if shown_ok else [shown], want)


# 7 ------------------------------------------------------------------------------------------------
class MirrorRound(TypedDict):
    first: Annotated[int, Field(ge=0, le=2)]
    second_at: Annotated[int, Field(ge=0, le=8)]
    append: Annotated[int, Field(ge=0, le=2)]
    append_at: Annotated[int, Field(ge=0, le=8)]
    lose_state: bool


TwoMirrorsExample = Annotated[list[MirrorRound], Field(min_length=1, max_length=2)]


def two_mirrors_examples() -> Any:
    """Rounds: *first* lines, then two mirrors of s1 on one host race (the second starts *second_at* s
    later) while *append* lines land at *append_at*; one more flush settles the round; then the host may
    lose its mirror state (upstream re-uploads from byte 0 by design: "losing the state file is
    recoverable", ``cli/session.py:16-18``)."""
    return st.lists(
        record(
            {
                "first": st.integers(0, 2),
                "second_at": st.integers(0, 8),
                "append": st.integers(0, 2),
                "append_at": st.integers(0, 8),
                "lose_state": st.booleans(),
            }
        ),
        min_size=1,
        max_size=2,
    )


def two_mirrors(sim: Simulation, rounds: Any, variant: Variant, world: World = MODEL) -> Verdict:
    """The racing mirrors upload what one mirror would: per round the bytes from the round's start
    cursor (0 after a lost state) to the end of the file, each once."""
    tc = system(world, sim, variant, latency=1.0)
    c, h = host(world, sim, tc)
    terminal = tc.agent("host", home=h.tree)
    written, start, expected = 0, 0, b""
    for rnd in rounds:
        for _ in range(rnd["first"]):
            write(h, "s1", line(written).encode())
            written += 1
        out: dict[str, Any] = {}

        def appender(n: int, at: float, first: int) -> Gen:
            yield sim.timeout(at)
            for i in range(n):
                write(h, "s1", line(first + i).encode())

        sim.process(appender(rnd["append"], rnd["append_at"], written))
        written += rnd["append"]
        background(sim, c.mirror(h, "s1"), out, 1)
        background(sim, terminal.mirror(h, "s1"), out, 2, rnd["second_at"])
        sim.run()
        attempt(c, c.mirror(h, "s1"))  # the next flush settles the round
        whole = source(h, "s1")
        expected += whole[start:]
        start = len(whole)
        if rnd["lose_state"]:
            state = c.state_path("claude-code", "s1")
            if h.tree.exists(state):
                h.tree.delete(state)
            start = 0
    got = c.call(c.transcript("claude-code", "s1"))
    return pr.check_transcript_equals(got, expected)


# 8 ------------------------------------------------------------------------------------------------
class PartSeqOverflowExample(TypedDict):
    base: Annotated[int, Field(ge=99_988, le=99_999)]
    flushes: Annotated[int, Field(ge=1, le=6)]


def part_seq_overflow_examples() -> Any:
    # A long-lived session whose newest part's seq is within 12 of the 5-digit limit.
    return record({"base": st.integers(99_988, 99_999), "flushes": st.integers(1, 6)})


def part_seq_overflow(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    c, h = host(world, sim, tc)
    prefix = "sessions/claude-code/s1/"
    seed = {"seq": ex["base"], "uuid": "00000000", "uploaded_bytes": 11}  # as if flushed long ago
    tc.bucket.put_bytes(prefix + f"part-{ex['base']:05d}-00000000.jsonl", b'{"seed":1}\n')
    tc.bucket.put_json(prefix + "meta.json", {"schema_version": 1, "parts": [seed]})
    lines = ['{"seed":1}']
    for i in range(ex["flushes"]):
        lines.append(f'{{"n":{i}}}')
        write(h, "s1", (lines[-1] + "\n").encode())
        c.call(c.mirror(h, "s1"))
    ok, shown = attempt(c, c.session_show("s1", tail=100))
    return pr.check_lines_equal(shown[1] if ok else [shown], lines)


# 20a ----------------------------------------------------------------------------------------------
SessionIdAmbiguityExample = Annotated[
    list[tuple[Literal["claude-code", "codex", "openclaw"], Literal["s1", "s2"]]],
    Field(min_length=1, max_length=4),
]


def session_id_ambiguity_examples() -> Any:
    return st.lists(
        st.tuples(st.sampled_from(["claude-code", "codex", "openclaw"]), st.sampled_from(["s1", "s2"])),
        min_size=1,
        max_size=4,
    )


def session_id_ambiguity(sim: Simulation, sessions: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    c = tc.agent("host")
    holders: dict[str, set[str]] = {}
    for hname, sid in sessions:  # one host per harness, so their mirror states never interact
        h = world.harness(hname, world.tree())
        sid_full = sid if hname != "openclaw" else f"main__{sid}"
        write(h, sid_full, f'{{"h":"{hname}"}}\n'.encode())
        host_c = tc.agent("host", home=h.tree)
        host_c.call(host_c.mirror(h, sid_full))
        holders.setdefault(sid_full, set()).add(hname)
    for sid, hs in sorted(holders.items()):
        ok, res = attempt(c, c.session_show(sid))
        if ok and len(hs) > 1:
            return Verdict.violated(f"show {sid} silently picked {res[0].get('harness')} of {sorted(hs)}")
        if len(hs) == 1 and not ok:
            return Verdict.violated(f"show {sid} (only under {min(hs)}) failed: {res}")
        for hname in sorted(hs) if len(hs) > 1 else ():  # the session of each harness is reachable
            ok, res = attempt(c, c.session_show(sid, harness=hname))
            if not ok or res[0].get("harness") != hname:
                return Verdict.violated(f"show {sid} --harness {hname} failed: {res}")
    return Verdict.ok()
