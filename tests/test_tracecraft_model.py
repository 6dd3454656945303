"""Tracecraft's operations on the in-memory store, mirroring upstream's own test expectations (note §5)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sim.engine import Simulation
from sim.faults import Crash, FaultPlan
from sim.files import MemoryTree
from sim.objects import MemoryStore
from systems.tracecraft import faults as fp
from systems.tracecraft.model import Client, FileTailHarness, HermesHarness, Tracecraft, encode_cwd
from systems.tracecraft.protocol import TracecraftError

LINE_RE = re.compile(r"\[(.*?)\] \((direct|broadcast)\) (\S+): (.+)")


@pytest.fixture
def sim() -> Any:
    s = Simulation(3)
    yield s
    s.close()


@pytest.fixture
def tc(sim: Simulation) -> Tracecraft:
    return Tracecraft(sim, MemoryStore())


def tick(sim: Simulation, s: float = 1.0) -> None:
    sim.run(until=sim.now + s)


def agent(tc: Tracecraft, name: str, **kw: Any) -> Client:
    return tc.agent(name, **kw)


# -- memory ------------------------------------------------------------------------------------------
def test_history_oldest_first_and_limit(sim: Simulation, tc: Tracecraft) -> None:
    """History prints oldest first; --limit 2 keeps the newest two."""
    a = agent(tc, "a")
    for v in ("v1", "v2", "v3"):
        a.call(a.memory_set("k", v))
        tick(sim)

    full = [ln.split(": ")[1] for ln in a.call(a.memory_history("k"))]
    last2 = [ln.split(": ")[1] for ln in a.call(a.memory_history("k", limit=2))]

    assert full == ["v1", "v2", "v3"]
    assert last2 == ["v2", "v3"]


def test_history_excludes_nested_and_missing_exits(tc: Tracecraft) -> None:
    """history a never includes a.b; a key with no history exits 1."""
    a = agent(tc, "a")
    a.call(a.memory_set("a.b", "nested"))
    with pytest.raises(TracecraftError, match=r"No history for a\."):
        a.call(a.memory_history("a"))


def test_memory_set_rejects_reserved_keys(tc: Tracecraft) -> None:
    """Blank keys, '/', _history and _history.* are rejected; a..b and other _ keys are accepted."""
    a = agent(tc, "a")
    for bad in ("", " ", "a/b", "_history", "_history.x"):
        with pytest.raises(TracecraftError):
            a.call(a.memory_set(bad, "v"))
    a.call(a.memory_set("a..b", "ok"))
    a.call(a.memory_set("_private", "ok"))


def test_get_with_meta_and_missing(tc: Tracecraft) -> None:
    """get prints the value; --with-meta gives {key, value, set_by, set_at}; missing exits 1."""
    a = agent(tc, "a")
    a.call(a.memory_set("k", "v"))

    meta = a.call(a.memory_get("k", with_meta=True))

    assert a.call(a.memory_get("k")) == "v"
    assert {"key", "value", "set_by", "set_at"} == set(meta) and meta["set_by"] == "a"
    assert meta["set_at"].endswith("+00:00")
    with pytest.raises(TracecraftError):
        a.call(a.memory_get("nope"))


def test_list_hides_history_and_is_not_boundary_aware(tc: Tracecraft) -> None:
    """list skips memory/_history/ and prefix 'a' also matches 'ab'."""
    a = agent(tc, "a")
    for k in ("a", "ab", "a.c", "b"):
        a.call(a.memory_set(k, "v"))

    assert a.call(a.memory_list("a")) == ["a", "a.c", "ab"]
    assert all("_history" not in k for k in a.call(a.memory_list()))


def test_crash_after_snapshot_leaves_unlive_history(sim: Simulation, tc: Tracecraft) -> None:
    """A crash between the snapshot and the live PUT leaves a snapshot of a value that never went live."""
    a = agent(tc, "a")
    a.call(a.memory_set("k", "v1"))
    tick(sim)
    sim.faults = FaultPlan.parse([f"crash@{fp.MEMORY_SET_AFTER_SNAPSHOT}"])

    with pytest.raises(Crash):
        a.call(a.memory_set("k", "v2"))

    assert a.call(a.memory_get("k")) == "v1"
    assert a.call(a.memory_history("k"))[-1].endswith(": v2")


# -- mail --------------------------------------------------------------------------------------------
def test_inbox_new_show_silent_only_new(sim: Simulation, tc: Tracecraft) -> None:
    """--new shows, then is silent, then shows only new mail; a plain inbox leaves the cursor alone."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    a.call(a.send("bob", "one"))
    tick(sim)

    first = [m.message for m in b.call(b.inbox(new=True))]
    second = b.call(b.inbox(new=True))
    cursor = tc.bucket.get_bytes("messages/bob/_cursor.json")
    b.call(b.inbox())
    a.call(a.send("bob", "two"))
    tick(sim)
    third = [m.message for m in b.call(b.inbox(new=True))]

    assert (first, second, third) == (["one"], [], ["two"])
    assert cursor is not None


def test_broadcasts_per_agent_and_own_skipped(sim: Simulation, tc: Tracecraft) -> None:
    """Broadcasts reach every other agent; one's own broadcast is skipped but advances the cursor."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    a.call(a.send("_broadcast", "all hands"))
    tick(sim)

    own = a.call(a.inbox(new=True))
    theirs = [m.render() for m in b.call(b.inbox(new=True))]

    assert own == []
    assert tc.bucket.get_json("messages/alice/_cursor.json") is not None
    assert len(theirs) == 1 and LINE_RE.fullmatch(theirs[0]).group(2) == "broadcast"  # type: ignore[union-attr]


def test_step_tag_and_pinned_line(tc: Tracecraft) -> None:
    """--step tags the line; an untagged line matches upstream's pinned regex."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    a.call(a.send("bob", "ready", step="s1"))
    a.call(a.send("bob", "plain"))

    lines = [m.render() for m in b.call(b.inbox())]

    m = LINE_RE.fullmatch(next(ln for ln in lines if ln.endswith("plain")))
    assert m is not None
    assert (m.group(2), m.group(3), m.group(4)) == ("direct", "alice", "plain")
    assert any(ln.endswith("alice [step s1]: ready") for ln in lines)


def test_recipient_validation_and_unvalidated_sender(tc: Tracecraft) -> None:
    """Recipients are validated; the sender id is not."""
    a = agent(tc, "alice")
    for bad in ("", "  ", "a/b", "_x"):
        with pytest.raises(TracecraftError):
            a.call(a.send(bad, "m"))
    x = agent(tc, "team/x")
    key = x.call(x.send("bob", "lost"))
    b = agent(tc, "bob")

    assert "messages/bob/" in key and b.call(b.inbox()) == []


def test_delete_keeps_broadcasts_and_excludes_new(tc: Tracecraft) -> None:
    """--delete removes printed direct mail, never broadcasts; it excludes --new."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    a.call(a.send("bob", "d"))
    a.call(a.send("_broadcast", "bc"))

    b.call(b.inbox(delete=True))

    assert [m.message for m in b.call(b.inbox())] == ["bc"]
    with pytest.raises(TracecraftError):
        b.call(b.inbox(new=True, delete=True))


def test_nested_junk_ignored_and_legacy_cursor(tc: Tracecraft) -> None:
    """Nested junk never shows and cannot poison the cursor; a legacy string cursor is tolerated."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    tc.bucket.put_json("messages/bob/junk/9999999999999999999_x_y.json", {"message": "junk"})
    tc.bucket.put_json("messages/bob/_cursor.json", {"direct": "messages/bob/1", "broadcast": None})
    a.call(a.send("bob", "real"))

    assert [m.message for m in b.call(b.inbox(new=True))] == ["real"]


def test_late_arrival_within_grace_shown_once(sim: Simulation, tc: Tracecraft) -> None:
    """A message stamped 100 s before the newest seen key is still shown, once."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    sim.clock("slow").skew(-100)
    s = agent(tc, "slow")
    a.call(a.send("bob", "on time"))
    b.call(b.inbox(new=True))
    s.call(s.send("bob", "late"))

    assert [m.message for m in b.call(b.inbox(new=True))] == ["late"]
    assert b.call(b.inbox(new=True)) == []


def test_burst_keeps_every_message_and_merge_is_chronological(sim: Simulation, tc: Tracecraft) -> None:
    """A burst in one instant keeps every message; direct+broadcast merge by sent_at."""
    senders = [agent(tc, f"s{i}") for i in range(5)]
    for i in range(4):
        for s in senders:
            s.call(s.send("bob" if i % 2 else "_broadcast", f"{s.agent_id}-{i}"))
    b = agent(tc, "bob")

    lines = b.call(b.inbox())

    assert len(lines) == 20
    assert [m.sent_at for m in lines] == sorted(m.sent_at for m in lines)


def test_status_unread_and_crash_window(sim: Simulation, tc: Tracecraft) -> None:
    """status: unread only with a cursor, incl. foreign broadcasts; a claim without status is in_progress."""
    a, b = agent(tc, "alice"), agent(tc, "bob")
    a.call(a.send("bob", "first"))
    b.call(b.inbox(new=True))
    tick(sim)
    a.call(a.send("bob", "x"))
    a.call(a.send("_broadcast", "y"))
    sim.faults = FaultPlan.parse([f"crash@{fp.CLAIM_AFTER_CLAIM}"])
    with pytest.raises(Crash):
        a.call(a.claim("s1"))

    st = b.call(b.status())

    assert st["mailboxes"] == [
        {"agent": "_broadcast", "total": 1, "unread": None},
        {"agent": "bob", "total": 2, "unread": 2},
    ]
    assert st["steps"] == [{"id": "s1", "status": "in_progress", "agent": "alice"}]


# -- steps -------------------------------------------------------------------------------------------
def test_two_claims_one_winner(tc: Tracecraft) -> None:
    """Two claims give one winner; the stored owner is the first."""
    a, b = agent(tc, "a"), agent(tc, "b")
    a.call(a.claim("s1"))

    with pytest.raises(TracecraftError, match="already claimed by a"):
        b.call(b.claim("s1"))
    assert tc.bucket.get_json("steps/s1/claim.json")["agent"] == "a"


def test_complete_ownership_force_and_unclaimed(tc: Tracecraft) -> None:
    """A non-owner complete is refused (status untouched); --force sets the agent; unclaimed is allowed."""
    a, b = agent(tc, "a"), agent(tc, "b")
    a.call(a.claim("s1"))
    with pytest.raises(TracecraftError):
        b.call(b.complete("s1"))
    assert b.call(b.step_status("s1")) == ("in_progress", "a")

    b.call(b.complete("s1", force=True))

    assert b.call(b.step_status("s1")) == ("complete", "b")
    assert tc.bucket.get_json("steps/s1/claim.json")["agent"] == "a"
    assert b.call(b.complete("s2")) == "complete"


def test_handoff_document(tc: Tracecraft) -> None:
    """complete writes the schema-2 handoff with state, --to, --next-action, changed_files."""
    a = agent(tc, "a")
    a.call(a.claim("S.1"))
    a.call(
        a.complete("S.1", note="n", to="b", next_action="review", needs_review=True, changed_files=["x.py"])
    )

    h = tc.bucket.get_json("steps/s-1/handoff.json")

    assert (
        h["schema"],
        h["from_agent"],
        h["from_step"],
        h["next_agent"],
        h["state"],
        h["next_action"],
        h["note"],
        h["changed_files"],
    ) == (2, "a", "S.1", "b", "needs_review", "review", "n", ["x.py"])
    with pytest.raises(TracecraftError):
        a.call(a.complete("S.1", blocked=True, needs_review=True))


def test_wait_for_polls_blocked_and_review(sim: Simulation, tc: Tracecraft) -> None:
    """wait-for polls every 5 s, names needs_review, fails fast on blocked, succeeds on complete."""
    a, w = agent(tc, "a"), agent(tc, "w")
    a.call(a.claim("s1"))
    a.call(a.complete("s1", needs_review=True))

    def finish() -> Any:
        yield sim.timeout(12)
        yield from a.complete("s1")

    sim.process(finish())
    t0 = sim.now
    w.call(w.wait_for(["s1"]))

    assert sim.now - t0 == 15
    assert any("needs review: s1" in ln for ln in w.stderr)
    a.call(a.complete("s1", blocked=True))
    with pytest.raises(TracecraftError, match="blocked"):
        w.call(w.wait_for(["s1"]))


def test_crash_after_status_leaves_stale_handoff(sim: Simulation, tc: Tracecraft) -> None:
    """A crash between status and handoff leaves status complete and the previous handoff."""
    a = agent(tc, "a")
    a.call(a.claim("s1"))
    a.call(a.complete("s1", blocked=True, note="old"))
    sim.faults = FaultPlan.parse([f"crash@{fp.COMPLETE_AFTER_STATUS}"])

    with pytest.raises(Crash):
        a.call(a.complete("s1", note="new"))

    assert tc.bucket.get_json("steps/s1/status.json")["status"] == "complete"
    assert tc.bucket.get_json("steps/s1/handoff.json")["note"] == "old"


# -- artifacts and agents ----------------------------------------------------------------------------
def test_artifacts_shared_pool_and_overwrite(tc: Tracecraft) -> None:
    """Keys are artifacts/<norm step>/<basename> or artifacts/shared/; uploads overwrite; missing raises."""
    a = agent(tc, "a")
    a.call(a.artifact_upload("out/r.txt", b"1", step="A.1"))
    a.call(a.artifact_upload("r.txt", b"2", step="a-1"))
    a.call(a.artifact_upload("r.txt", b"3", step="shared"))

    assert a.call(a.artifact_download("r.txt", step="A.1")) == b"2"
    assert a.call(a.artifact_download("r.txt")) == b"3"
    assert a.call(a.artifact_list()) == ["artifacts/a-1/r.txt", "artifacts/shared/r.txt"]
    with pytest.raises(TracecraftError, match="Artifact not found"):
        a.call(a.artifact_download("nope"))


def test_registration_goes_stale(sim: Simulation, tc: Tracecraft) -> None:
    """init registers once; after 300 s the agent is stale whatever it did since."""
    a = agent(tc, "a")
    a.call(a.init())
    tick(sim, 301)
    a.call(a.claim("s1"))

    rows = a.call(a.agents())

    assert [(r["id"], r["status"], r["heartbeat_age_s"]) for r in rows] == [("a", "stale", 301)]


# -- session mirror ----------------------------------------------------------------------------------
def _session(sim: Simulation, tc: Tracecraft) -> tuple[Client, FileTailHarness, str]:
    home = MemoryTree(mtime=sim.clock("host").seconds)
    h = FileTailHarness("claude-code", home, cwd="/home/u/my app")
    return tc.agent("host", home=home), h, h.session_path("sess")


def test_mirror_parts_nothing_new_and_state_loss(sim: Simulation, tc: Tracecraft) -> None:
    """part 0, then only the new bytes as part 1; 'nothing new'; after state loss the file is re-uploaded."""
    c, h, path = _session(sim, tc)
    h.tree.write_bytes(path, b'{"a":1}\n')
    c.call(c.mirror(h))
    h.tree.append_bytes(path, b'{"b":2}\n')
    f2 = c.call(c.mirror(h))
    f3 = c.call(c.mirror(h))
    c.home.delete(".tracecraft/mirror-state/sess.json")
    f4 = c.call(c.mirror(h))

    assert (f2.seq, f2.cursor_range, f3.status) == (1, (8, 16), "nothing new")
    assert (f4.seq, f4.cursor_range) == (2, (0, 16))
    assert path.startswith(f".claude/projects/{encode_cwd('/home/u/my app')}/") and "-home-u-my-app" in path


def test_redaction_default_and_no_redact(sim: Simulation, tc: Tracecraft) -> None:
    """Redaction is on by default and counted in meta; --no-redact uploads raw bytes."""
    c, h, path = _session(sim, tc)
    h.tree.write_bytes(path, b'{"k":"ghp_' + b"A" * 30 + b'"}\n')
    c.call(c.mirror(h))
    h.tree.append_bytes(path, b'{"k":"hf_' + b"b" * 30 + b'"}\n')
    c.call(c.mirror(h, no_redact=True))

    meta, lines = c.call(c.session_show("sess", tail=5))

    assert meta["redaction_counts"] == {"github_pat": 1}
    assert lines[0] == '{"k":"[REDACTED:github_pat]"}' and "hf_" in lines[1]


def test_meta_rebuilt_list_show_stop(sim: Simulation, tc: Tracecraft) -> None:
    """meta is rebuilt per flush; list and show read it; stop deletes the state and sets ended_at."""
    c, h, path = _session(sim, tc)
    h.tree.write_bytes(path, b"l1\nl2\n")
    c.call(c.mirror(h))
    tc.bucket.put_json("sessions/claude-code/sess/meta.json",
                       {**tc.bucket.get_json("sessions/claude-code/sess/meta.json"), "extra": 1})  # fmt: skip
    h.tree.append_bytes(path, b"l3\n")
    c.call(c.mirror(h))

    meta = tc.bucket.get_json("sessions/claude-code/sess/meta.json")
    rows = c.call(c.session_list())
    _, tail = c.call(c.session_show("sess", tail=2))
    c.call(c.session_stop("sess"))

    assert "extra" not in meta and meta["total_source_bytes"] == 9 and len(meta["parts"]) == 2
    assert [r["session_id"] for r in rows] == ["sess"]
    assert tail == ["l2", "l3"]
    assert not c.home.exists(".tracecraft/mirror-state/sess.json")
    assert tc.bucket.get_json("sessions/claude-code/sess/meta.json")["ended_at"] is not None


def test_follow_reloads_state_and_rejects_bad_interval(sim: Simulation, tc: Tracecraft) -> None:
    """--follow flushes every interval and reloads the state each cycle; interval must be > 0."""
    c, h, path = _session(sim, tc)
    h.tree.write_bytes(path, b"a\n")

    def host() -> Any:
        yield sim.timeout(7)
        h.tree.append_bytes(path, b"b\n")

    sim.process(host())
    flushes = c.call(c.mirror_follow(h, interval=5, cycles=3))

    assert [f.status for f in flushes] == ["uploaded", "nothing new", "uploaded"]
    with pytest.raises(TracecraftError):
        c.call(c.mirror_follow(h, interval=0))


def test_compact_three_to_one_and_keep_tail(sim: Simulation, tc: Tracecraft) -> None:
    """compact 3→1 keeps the tail and compacted_from == 3; --keep-tail 1 leaves 2 parts; 1 part is a no-op."""
    c, h, path = _session(sim, tc)
    for ln in (b"l1\n", b"l2\n", b"l3\n"):
        h.tree.append_bytes(path, ln)
        c.call(c.mirror(h))
    before = c.call(c.session_show("sess", tail=10))[1]
    c.call(c.session_compact("sess"))
    meta, after = c.call(c.session_show("sess", tail=10))

    assert before == after == ["l1", "l2", "l3"]
    assert meta["parts"][0]["compacted_from"] == 3 and "last_compacted_at" in meta
    assert c.call(c.session_compact("sess")) is None
    with pytest.raises(TracecraftError):
        c.call(c.session_compact("sess", keep_tail=-1))


def test_compact_keep_tail_leaves_two(sim: Simulation, tc: Tracecraft) -> None:
    """--keep-tail 1 over three parts merges two and keeps one: two parts remain."""
    c, h, path = _session(sim, tc)
    for ln in (b"l1\n", b"l2\n", b"l3\n"):
        h.tree.append_bytes(path, ln)
        c.call(c.mirror(h))

    c.call(c.session_compact("sess", keep_tail=1))

    assert len(c._listed_parts("sessions/claude-code/sess/")) == 2


def test_interrupted_compact_shows_duplicates(sim: Simulation, tc: Tracecraft) -> None:
    """A crash after the compact's meta PUT leaves merged + originals: show prints the lines twice."""
    c, h, path = _session(sim, tc)
    for ln in (b"l1\n", b"l2\n"):
        h.tree.append_bytes(path, ln)
        c.call(c.mirror(h))
    sim.faults = FaultPlan.parse([f"crash@{fp.COMPACT_AFTER_META}"])
    with pytest.raises(Crash):
        c.call(c.session_compact("sess"))

    assert sorted(c.call(c.session_show("sess", tail=10))[1]) == ["l1", "l1", "l2", "l2"]


def test_harness_discovery(sim: Simulation) -> None:
    """codex ids come from the rollout name; openclaw ids are <agent>__<stem> minus sessions.json."""
    tree = MemoryTree()
    tree.write_bytes(".codex/sessions/2026/01/05/rollout-2026-01-05T01-02-03-abc_1.jsonl", b"x\n")
    tree.write_bytes(".openclaw/agents/main/sessions/t1.jsonl", b"x\n")
    tree.write_bytes(".openclaw/agents/main/sessions/sessions.json", b"{}")

    assert [s.session_id for s in FileTailHarness("codex", tree).discover()] == ["abc_1"]
    assert [s.session_id for s in FileTailHarness("openclaw", tree).discover()] == ["main__t1"]


def test_hermes_rowid_cursor(sim: Simulation, tc: Tracecraft, tmp_path: Any) -> None:
    """Hermes rows become JSONL with content decoded from \\x00json:; the cursor is the max id."""
    h = HermesHarness.create(tmp_path / "state.db")
    h.add("s1", "user", "hello")
    h.add("s2", "user", "other")
    h.add("s1", "assistant", '\x00json:{"text": "hi"}')
    c = tc.agent("host")

    f1 = c.call(c.mirror(h, "s1"))
    h.add("s1", "user", "again")
    f2 = c.call(c.mirror(h, "s1"))
    _, lines = c.call(c.session_show("s1", tail=10))

    assert (f1.cursor_range, f2.cursor_range) == ((0, 3), (3, 4))
    assert ['{"text": "hi"}' in lines[1] or '"text": "hi"' in lines[1], "again" in lines[2]] == [True, True]
    assert h.find(None).session_id == "s2" or h.find(None).session_id == "s1"
