"""The seven fidelity gaps of issue 16, one test each, against the released tracecraft-ai 0.2.5.

Paths are inside the 0.2.5 wheel (``site-packages/tracecraft/``); the fidelity note's Corrections section
states the same facts. Where the upstream function is pure or needs only a local file (the Hermes
adapter, ``put_json``'s body), the test runs it side by side with the model.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sim.engine import Simulation
from sim.files import MemoryTree
from sim.objects import MemoryStore
from systems.tracecraft.model import Client, FileTailHarness, HermesHarness, Tracecraft
from systems.tracecraft.protocol import TracecraftError

WHY = "tracecraft-ai 0.2.5 (the test extra) is not installed"


@pytest.fixture
def sim() -> Any:
    s = Simulation(5)
    yield s
    s.close()


@pytest.fixture
def tc(sim: Simulation) -> Tracecraft:
    return Tracecraft(sim, MemoryStore(), project="p", bucket_name="bkt")


def _host(tc: Tracecraft, harness: str = "claude-code") -> tuple[Client, FileTailHarness]:
    home = MemoryTree()
    return tc.agent("host", home=home), FileTailHarness(harness, home)


def _hermes_db(path: Path, *, with_sessions: bool = True) -> HermesHarness:
    HermesHarness.create(path)
    if not with_sessions:
        db = sqlite3.connect(path)
        db.execute("DROP TABLE sessions")
        db.commit()
        db.close()
    return HermesHarness(path)


# 1 -----------------------------------------------------------------------------------------------
def test_hermes_discovers_sessions_through_the_sessions_table(tmp_path: Path, tc: Tracecraft) -> None:
    """``harness/hermes.py:76-90``: ``discover`` lists ``SELECT id FROM sessions``; ``mirror --session-id``
    picks among them (``cli/session.py:248-261``), so a message whose session has no ``sessions`` row
    fails with "No hermes session found for id=…", while the active session (owner of the highest message
    id, ``hermes.py:92-109``) needs no row."""
    h = _hermes_db(tmp_path / "state.db")
    h.add("s1", "user", "hi")
    h.add("orphan", "user", "no sessions row", register=False)
    c = tc.agent("host")

    with pytest.raises(TracecraftError) as err:
        c.call(c.mirror(h, "orphan"))
    assert str(err.value) == "No hermes session found for id=orphan"
    assert c.call(c.mirror(h, "s1")).status == "uploaded"
    assert c.call(c.mirror(h)).key.startswith("sessions/hermes/orphan/part-00000-")
    up = pytest.importorskip("tracecraft.harness.hermes", reason=WHY)
    real = up.HermesHarness(tmp_path / "state.db")
    assert [s.session_id for s in real.discover(tmp_path)] == [s.session_id for s in h.discover()]
    assert real.active_session(tmp_path).session_id == "orphan"


# 2 -----------------------------------------------------------------------------------------------
def test_json_bodies_are_indent_2_ascii(tc: Tracecraft) -> None:
    """``s3.py:47-51``: ``Body=json.dumps(data, indent=2)`` (ASCII escapes, no trailing newline); the
    mirror state file too (``cli/session.py:64-66``). Stored bytes equal what ``S3.put_json`` sends."""
    a = tc.agent("a")
    a.call(a.memory_set("k", "naïve 🙂"))
    stored = tc.bucket.get_bytes("memory/k.json")
    doc = json.loads(stored or b"")
    c, h = _host(tc)
    h.tree.append_bytes(h.session_path("s1"), b'{"n":0}\n')
    c.call(c.mirror(h, "s1"))
    state = c.home.read_bytes(c.state_path("claude-code", "s1"))

    assert stored == json.dumps(doc, indent=2).encode()
    assert b"\\u00efve \\ud83d\\ude42" in (stored or b"")
    assert state == json.dumps(json.loads(state), indent=2).encode()
    s3 = pytest.importorskip("tracecraft.s3", reason=WHY)
    sent: dict[str, Any] = {}
    fake = s3.S3.__new__(s3.S3)
    fake.project, fake.bucket = "p", "bkt"
    fake.client = type("C", (), {"put_object": lambda self, **kw: sent.update(kw)})()
    fake.put_json("memory/k.json", doc)
    assert sent["Body"].encode() == stored


# 3 -----------------------------------------------------------------------------------------------
CWDS = [("claude-code", "/work/app"), ("codex", None), ("openclaw", None)]


@pytest.mark.parametrize(("harness", "cwd"), CWDS)
def test_meta_cwd_is_null_except_for_claude_code(tc: Tracecraft, harness: str, cwd: str | None) -> None:
    """``harness/base.py:16``: ``Session.cwd`` defaults to None; only claude-code sets it
    (``claude_code.py:47-49``; codex ``codex.py:44``, openclaw ``openclaw.py:76``), so meta stores
    ``"cwd": null`` (``cli/session.py:339``)."""
    c, h = _host(tc, harness)
    sid = "main__s1" if harness == "openclaw" else "s1"
    h.tree.append_bytes(h.session_path(sid), b"x\n")
    c.call(c.mirror(h, sid))

    meta = tc.bucket.get_json(f"sessions/{harness}/{sid}/meta.json")

    assert meta["cwd"] == cwd
    assert meta["source_path"] == f"/home/agent/{h.session_path(sid)}"


# 4 -----------------------------------------------------------------------------------------------
def test_hermes_degrades_instead_of_raising(tmp_path: Path, tc: Tracecraft) -> None:
    """``harness/hermes.py:58-65``: a malformed ``\\x00json:`` payload is kept as the original string;
    ``:81-87, 93-102, 115-124, 133-142``: a missing database or a missing table answers no sessions, size
    0 and nothing new; the CLI then reports "No hermes session found in cwd=…"."""
    h = _hermes_db(tmp_path / "state.db")
    h.add("s1", "user", "\x00json:{broken")
    h.add("s1", "user", '\x00json:{"k": [1]}')
    missing = HermesHarness(tmp_path / "absent.db")
    no_table = _hermes_db(tmp_path / "bare.db", with_sessions=False)
    c = tc.agent("host")

    body, cursor = h.read_new(h.find("s1"), 0)
    rows = [json.loads(ln) for ln in body.splitlines()]
    with pytest.raises(TracecraftError) as err:
        c.call(c.mirror(missing))

    assert [r["content"] for r in rows] == ["\x00json:{broken", {"k": [1]}] and cursor == 2
    assert str(err.value) == "No hermes session found in cwd=/work/app"
    assert (missing.discover(), no_table.discover()) == ([], [])
    sess = h.find("s1")
    assert (missing.size(sess), missing.read_new(sess, 3)) == (0, (b"", 3))
    up = pytest.importorskip("tracecraft.harness.hermes", reason=WHY)
    real = up.HermesHarness(tmp_path / "state.db")
    assert real.read_new(real.discover(tmp_path)[0], 0) == (body, cursor)
    assert up.HermesHarness(tmp_path / "absent.db").size(real.discover(tmp_path)[0]) == 0


# 5 -----------------------------------------------------------------------------------------------
def test_artifact_download_uses_the_name_as_given(tc: Tracecraft) -> None:
    """``cli/artifacts.py:17-31``: upload keys by ``os.path.basename(path)``; ``:34-51``: download keys by
    NAME verbatim, so ``download sub/r.txt`` after ``upload sub/r.txt`` is not found."""
    a = tc.agent("a")
    key = a.call(a.artifact_upload("sub/r.txt", b"report"))

    with pytest.raises(TracecraftError) as err:
        a.call(a.artifact_download("sub/r.txt"))

    assert key == "artifacts/shared/r.txt"
    assert str(err.value) == "Artifact not found: artifacts/shared/sub/r.txt"
    assert a.call(a.artifact_download("r.txt")) == b"report"


# 6 -----------------------------------------------------------------------------------------------
def test_wait_for_validates_ids_inside_the_poll_loop(sim: Simulation, tc: Tracecraft) -> None:
    """``cli/steps.py:188-194``: ids are normalized inside ``while time.time() < deadline``, so with
    ``--timeout 0`` a bad id reports a timeout; with time left it raises after reading the earlier ids."""
    w = tc.agent("w")

    with pytest.raises(TracecraftError) as zero:
        w.call(w.wait_for(["a/b"], timeout=0))
    with pytest.raises(TracecraftError) as later:
        w.call(w.wait_for(["s1", "a/b"], timeout=10))

    assert str(zero.value) == "Timeout after 0s. Not all steps complete: a/b"
    assert str(later.value) == "Step ids may not contain '/'"


# 7 -----------------------------------------------------------------------------------------------
def test_output_channels_and_status_fields(sim: Simulation, tc: Tracecraft) -> None:
    """``cli/session.py:90-100, 199-201, 552-556, 611-615``: the protection summary is on stdout after
    every one-shot mirror (also "nothing new") and after a compact that merged, not after "nothing to
    compact"; stderr carries only the listed warnings (``cli/memory.py:79, 119``, ``cli/messages.py:78``,
    ``cli/steps.py:69-74, 216``); ``status --json`` has project/backend/bucket/generated_at
    (``cli/status.py:91-100``)."""
    summary = "✔ 1 session(s) protected · 0.0 MB in YOUR bucket · 0 lost"
    c, h = _host(tc)
    h.tree.append_bytes(h.session_path("s1"), b"a\n")
    c.call(c.mirror(h, "s1"))
    c.call(c.mirror(h, "s1"))
    c.call(c.session_compact("s1"))
    h.tree.append_bytes(h.session_path("s1"), b"b\n")
    c.call(c.mirror(h, "s1"))
    c.call(c.session_compact("s1"))
    a = tc.agent("a")
    for cmd in (a.memory_get("nope"), a.memory_history("nope"), a.wait_for(["s9"], timeout=1)):
        with pytest.raises(TracecraftError):
            a.call(cmd)
    a.call(a.inbox(delete=True))

    assert [ln for ln in c.stdout if ln == summary] == [summary] * 4
    assert c.stdout[c.stdout.index("nothing to compact: 1 mergeable part(s) (kept newest 0)") + 1] != summary
    assert c.stderr == []
    assert a.stderr[:3] == ["", "No history for nope.", "Waiting... (1s remaining)"]
    assert a.stderr[3].startswith("warning: --delete is deprecated")
    assert a.stdout == ["No messages."]
    st = a.call(a.status())
    fields = (st["project"], st["backend"], st["bucket"], st["generated_at"])
    assert fields == ("p", "s3", "bkt", a.clock.iso())
    assert list(st) == [
        "project", "backend", "bucket", "generated_at", "agents", "steps", "mailboxes", "sessions",
    ]  # fmt: skip
