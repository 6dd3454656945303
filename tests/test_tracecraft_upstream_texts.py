"""Upstream 0.2.5's exact texts and edge cases found in the review's fidelity audit (note §2.2–§2.6)."""

from __future__ import annotations

from typing import Any

import pytest

from sim.engine import Simulation
from sim.files import MemoryTree
from sim.objects import MemoryStore
from systems.tracecraft.model import Client, FileTailHarness, Tracecraft
from systems.tracecraft.protocol import TracecraftError, normalize_step_id


@pytest.fixture
def sim() -> Any:
    s = Simulation(5)
    yield s
    s.close()


@pytest.fixture
def tc(sim: Simulation) -> Tracecraft:
    return Tracecraft(sim, MemoryStore())


def _mirrored(tc: Tracecraft, lines: list[bytes]) -> tuple[Client, FileTailHarness]:
    home = MemoryTree()
    h = FileTailHarness("claude-code", home)
    c = tc.agent("host", home=home)
    for ln in lines:
        h.tree.append_bytes(h.session_path("s1"), ln)
        c.call(c.mirror(h, "s1"))
    return c, h


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (" ", "Key cannot be empty"),
        ("a/b", "Memory keys use dots as separators; '/' is not allowed"),
        ("_history.x", "The '_history' key namespace is reserved for version snapshots"),
    ],
)
def test_memory_key_errors(tc: Tracecraft, key: str, message: str) -> None:
    """memory set rejects blank, '/' and reserved keys with upstream's messages."""
    a = tc.agent("a")
    with pytest.raises(TracecraftError) as err:
        a.call(a.memory_set(key, "v"))
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("recipient", "message"),
    [
        ("  ", "Recipient cannot be empty"),
        ("bob/x", "Recipient may not contain '/'"),
        ("_cursor.json", "Recipient names starting with '_' are reserved ('_broadcast' broadcasts to all)"),
    ],
)
def test_recipient_errors(tc: Tracecraft, recipient: str, message: str) -> None:
    """send rejects blank, '/' and reserved recipients with upstream's messages."""
    a = tc.agent("a")
    with pytest.raises(TracecraftError) as err:
        a.call(a.send(recipient, "hi"))
    assert str(err.value) == message


def test_step_id_errors() -> None:
    """normalize_step_id's two errors carry upstream's messages."""
    with pytest.raises(TracecraftError) as blank:
        normalize_step_id(" ")
    with pytest.raises(TracecraftError) as slash:
        normalize_step_id("a/b")
    assert (str(blank.value), str(slash.value)) == ("Step id cannot be empty", "Step ids may not contain '/'")


def test_flag_conflicts(tc: Tracecraft) -> None:
    """inbox --delete --new and complete --blocked --needs-review fail with upstream's messages."""
    a = tc.agent("a")
    with pytest.raises(TracecraftError) as inbox:
        a.call(a.inbox(new=True, delete=True))
    with pytest.raises(TracecraftError) as complete:
        a.call(a.complete("s1", blocked=True, needs_review=True))
    assert str(inbox.value) == "--delete and --new are mutually exclusive"
    assert str(complete.value) == "Use at most one of --blocked / --needs-review"


def test_foreign_complete_refused_with_hint(tc: Tracecraft) -> None:
    """A non-owner's complete names the owner, quotes both ids and suggests --force."""
    a, b = tc.agent("a"), tc.agent("b")
    a.call(a.claim("S.1"))
    with pytest.raises(TracecraftError) as err:
        b.call(b.complete("S.1"))
    assert str(err.value) == (
        "Step S.1 is claimed by 'a', not 'b'. Pass --force to complete it anyway (e.g. if the "
        "claim-holder crashed)."
    )


def test_wait_for_texts(sim: Simulation, tc: Tracecraft) -> None:
    """wait-for: "Waiting... (Ns remaining)" progress, "All steps complete", blocked and timeout errors."""
    a, w = tc.agent("a"), tc.agent("w")
    a.call(a.claim("s1"))

    def finish() -> Any:
        yield sim.timeout(7)
        yield from a.complete("s1")

    sim.process(finish())
    w.call(w.wait_for(["s1"], timeout=60))
    assert w.stderr == ["Waiting... (60s remaining)", "Waiting... (55s remaining)"]  # cli/steps.py:216
    assert w.stdout == ["All steps complete: s1"]

    a.call(a.complete("s1", blocked=True))
    with pytest.raises(TracecraftError) as blocked:
        w.call(w.wait_for(["s1"]))
    assert str(blocked.value) == (
        "Step s1 is blocked (agent: a) — it will not complete without intervention. Resolve it and "
        "re-run wait-for."
    )
    a.call(a.claim("s2"))
    with pytest.raises(TracecraftError) as timeout:
        w.call(w.wait_for(["s2"], timeout=10))
    assert str(timeout.value) == "Timeout after 10s. Not all steps complete: s2"


def test_nothing_new_and_session_not_found(tc: Tracecraft) -> None:
    """A mirror with no new bytes prints upstream's receipt; show of an unknown id fails in lower case."""
    c, h = _mirrored(tc, [b'{"n":0}\n'])
    c.call(c.mirror(h, "s1"))
    with pytest.raises(TracecraftError) as err:
        c.call(c.session_show("nope"))
    assert c.stdout[-2:] == [
        "nothing new: session=s1 cursor=8 size=8",
        "✔ 1 session(s) protected · 0.0 MB in YOUR bucket · 0 lost",  # cli/session.py:199-200
    ]
    assert str(err.value) == "session not found: nope"


def test_missing_harness_session(tc: Tracecraft) -> None:
    """A harness without the session fails with "No <harness> session found for id=<sid>"."""
    h = FileTailHarness("codex", MemoryTree())
    c = tc.agent("host", home=h.tree)
    with pytest.raises(TracecraftError) as err:
        c.call(c.mirror(h, "s9"))
    assert str(err.value) == "No codex session found for id=s9"


def test_keep_tail_beyond_part_count_compacts_nothing(tc: Tracecraft) -> None:
    """--keep-tail K >= the part count leaves no targets (upstream slices ``[:-K]``): nothing to compact."""
    c, _ = _mirrored(tc, [b"l1\n", b"l2\n", b"l3\n"])
    assert c.call(c.session_compact("s1", keep_tail=4)) is None
    assert c.stdout[-1] == "nothing to compact: 0 mergeable part(s) (kept newest 3)"
    assert len(c._listed_parts("sessions/claude-code/s1/")) == 3


def test_show_and_compact_search_part_names_next_seq_matches(tc: Tracecraft) -> None:
    """show/compact ``search`` PART_RE on the last path segment of a recursive listing (a nested or
    prefixed part name counts); the next seq ``match``es it, so a prefixed name does not move the seq."""
    c, h = _mirrored(tc, [b"l1\n"])
    tc.bucket.put_bytes("sessions/claude-code/s1/old-part-00007-0000000a.jsonl", b"odd\n")
    tc.bucket.put_bytes("sessions/claude-code/s1/sub/part-00003-0000000b.jsonl", b"nested\n")
    h.tree.append_bytes(h.session_path("s1"), b"l2\n")
    flush = c.call(c.mirror(h, "s1"))
    _, shown = c.call(c.session_show("s1", tail=10))

    assert flush.seq == 4  # the nested part-00003 counts, the prefixed name does not
    assert shown == ["odd", "l1", "l2", "nested"]  # key order, every searched part name


def test_inbox_body_fallback_and_receipts(tc: Tracecraft) -> None:
    """A broadcast whose body says it is from me is skipped even when its key names someone else;
    missing fields print as upstream's defaults; empty reads print "No messages."/"No new messages."."""
    bob = tc.agent("bob")
    assert bob.call(bob.inbox()) == [] and bob.stdout == ["No messages."]
    tc.bucket.put_json("messages/_broadcast/1767571200000000001_x_0000000a.json", {"from": "bob"})
    tc.bucket.put_json("messages/bob/1767571200000000002_y_0000000b.json", {"to": "bob"})

    lines = bob.call(bob.inbox(new=True))

    assert [m.render() for m in lines] == ["[?] (direct) ?: "]
    assert bob.call(bob.inbox(new=True)) == [] and bob.stdout[-1] == "No new messages."


def test_claim_owner_unknown_and_complete_started_at(tc: Tracecraft) -> None:
    """A claim without an agent reads as "unknown"; an unclaimed complete stamps started_at = now."""
    a = tc.agent("a")
    tc.bucket.put_json("steps/s1/claim.json", {"claimed_at": "x"})
    with pytest.raises(TracecraftError) as err:
        a.call(a.claim("s1"))
    a.call(a.complete("s2", to="b"))
    status = tc.bucket.get_json("steps/s2/status.json")

    assert str(err.value) == "Step s1 already claimed by unknown"
    assert status["started_at"] == status["completed_at"]
    assert a.stdout[-1] == "Completed step s2 → handed off to b"


def test_stop_is_best_effort(tc: Tracecraft) -> None:
    """stop of a never-mirrored session is not an error; a mirrored one clears state and marks ended once."""
    c, _ = _mirrored(tc, [b"l1\n"])
    assert c.call(c.session_stop("ghost")) is None
    c.call(c.session_stop("s1"))
    c.call(c.session_stop("s1"))

    assert c.stdout[-3:] == [
        "stopped session=ghost  state_cleared=False  meta_marked_ended=False",
        "stopped session=s1  state_cleared=True  meta_marked_ended=True",
        "stopped session=s1  state_cleared=False  meta_marked_ended=False",
    ]


def test_mirror_receipt_and_meta_defaults(tc: Tracecraft) -> None:
    """A flush prints upstream's receipt; the rebuilt meta keeps started_at and counts redactions."""
    c, _ = _mirrored(tc, [b'{"k":"AKIAIOSFODNN7EXAMPLE"}\n'])
    meta = tc.bucket.get_json("sessions/claude-code/s1/meta.json")
    uuid = meta["parts"][0]["uuid"]

    assert c.stdout[-2] == (
        f"uploaded part-00000-{uuid}  source=29B  upload=34B  redactions={{'aws_access_key': 1}}"
    )
    assert (meta["cwd"], meta["redaction_counts"]) == ("/work/app", {"aws_access_key": 1})


def test_history_defaults_and_list_of_any_object(tc: Tracecraft) -> None:
    """history prints '?' for a snapshot without set_at/set_by; list names every non-history object."""
    a = tc.agent("a")
    a.call(a.memory_set("k", "v"))
    tc.bucket.put_json("memory/_history/k/1999999999999999999_z_0000000c.json", {"value": "w"})
    tc.bucket.put_bytes("memory/notes.txt", b"x")

    assert a.call(a.memory_history("k"))[-1] == "[?] ?: w"
    assert a.call(a.memory_list()) == ["k", "notes.txt"]


def test_status_mailboxes_from_one_listing(sim: Simulation, tc: Tracecraft) -> None:
    """status: nested junk is not a mailbox; a non-conforming broadcast's sender comes from its body, so
    bob's own broadcast is not unread for bob."""
    bob, carol = tc.agent("bob"), tc.agent("carol")
    tc.bucket.put_json("messages/dave/sub/1_x_0000000d.json", {"from": "x"})
    carol.call(carol.send("bob", "m0"))
    bob.call(bob.inbox(new=True))  # bob's cursor
    tc.bucket.put_json("messages/_broadcast/odd.json", {"from": "bob", "message": "hi"})
    carol.call(carol.send("bob", "m1"))

    st = bob.call(bob.status())

    assert st["mailboxes"] == [
        {"agent": "_broadcast", "total": 1, "unread": None},
        {"agent": "bob", "total": 2, "unread": 1},
    ]
