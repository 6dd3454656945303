"""Verifier checkpoint, semantic replay, scratch detach and durable images (MEM-RTE-verifier-replay,
MEM-OBJ-verifier-scratch, MEM-OBJ-durable-images, RT-RTE-candidate-verification)."""

import base64
import hashlib

import pytest

from sim.engine import Simulation
from sim.faults import FaultPlan, WriteFailed
from systems.rsiagent import faults as fp
from systems.rsiagent.model import (
    LOSSLESS,
    ORIGINAL,
    AgenticVerifierNoProgressError,
    Scratch,
    VerifierSession,
    actionless_fingerprint,
    agentic_image_bytes,
    detach_executor,
    durable_user_message,
    recovery_history,
    scope_prior_curriculum_visuals,
    semantic_replay,
    sniff_mime,
    substantive_checkpoint,
    wire_message,
    with_durable_images,
)
from systems.rsiagent.state import Message

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels"
JPG = b"\xff\xd8\xff" + b"jpeg"


def U(t: str, imgs: tuple = ()) -> Message:
    return Message("user", t, images=imgs)


def A(t: str) -> Message:
    return Message("assistant", t)


def test_checkpoint_keeps_through_last_action_and_pends_its_observation() -> None:
    """History through the last Program/Look; that action's observation becomes pending."""
    base = [U("task")]
    raw = [
        *base,
        A("PROGRAM: ls"),
        U("files"),
        A("thinking aloud"),
        U("nudge"),
        A("LOOK: screen"),
        U("pixels"),
        A("more narration"),
        U("nudge2"),
    ]

    hist, pending = substantive_checkpoint(base, raw)

    assert hist == raw[:6] and pending == U("pixels")


def test_checkpoint_without_new_action_falls_back_to_base() -> None:
    """No new Program/Look: the base history, no pending observation."""
    base = [U("task")]

    assert substantive_checkpoint(base, [*base, A("hmm"), U("nudge")]) == (base, None)
    with pytest.raises(ValueError):
        substantive_checkpoint(base, [U("other"), A("x"), U("y")])


def test_actionless_fingerprint_only_for_actionless() -> None:
    """sha256 of lowercased, whitespace-collapsed text, only when the reply is not an action."""
    assert actionless_fingerprint("PROGRAM: ls") is None
    want = hashlib.sha256(b"i am stuck").hexdigest()
    assert actionless_fingerprint("I  am\nSTUCK") == want


def test_semantic_replay_drops_narration_keeps_nudges_as_original_context() -> None:
    """Narration-only pairs go; the nudge before the next action becomes ORIGINAL CONTEXT; images merge."""
    img = {"mime_type": "image/png", "sha256": "s1", "data": "AA=="}
    hist = [
        U("task"),
        A("PROGRAM: ls"),
        U("files", (img,)),
        A("narrate"),
        U("nudge", (img,)),
        A("LOOK: x"),
        U("seen"),
    ]

    out = semantic_replay(hist)

    assert [m.role for m in out] == ["user", "assistant", "user", "assistant", "user"]
    assert out[2].content == f"{LOSSLESS}\nfiles\n\n{ORIGINAL}\nnudge"
    assert out[2].images == (img,)
    assert out[4].content == f"{LOSSLESS}\nseen"


def test_replay_used_only_when_shorter() -> None:
    """The replay replaces the history only when it is shorter."""
    hist = [U("task"), A("PROGRAM: a"), U("r")]
    assert recovery_history(hist, recurrent=True) == hist
    long = [U("task"), A("PROGRAM: a"), U("r"), A("blah " * 50), U("n"), A("blah " * 50), U("n")]
    assert len(recovery_history(long, recurrent=True)) < len(long)


def test_three_segments_without_progress_raise() -> None:
    """The third consecutive segment with no new action raises; progress resets the count."""
    sim = Simulation(1)
    s = VerifierSession(history=[U("task")])
    s.segment(sim, [*s.history, A("PROGRAM: a"), U("r")])
    s.segment(sim, [*s.history, A("idle"), U("n")])
    s.segment(sim, [*s.history, A("idle"), U("n")])
    assert s.transport_recurrence
    with pytest.raises(AgenticVerifierNoProgressError):
        s.segment(sim, [*s.history, A("idle again"), U("n")])


def test_scratch_export_failure_tolerated_only_on_retry_path() -> None:
    """A failed export: archive None on the retry path, re-raised otherwise; rollback always."""
    sim = Simulation(1)
    assert detach_executor(sim, Scratch({"n": b"1"}), retry_path=False) is not None
    sim.faults = FaultPlan.parse([f"fail@{fp.SCRATCH_EXPORT}", f"fail@{fp.SCRATCH_EXPORT}#2"])
    s1 = Scratch({"n": b"1"})
    assert detach_executor(sim, s1, retry_path=True) is None and s1.rolled_back
    s2 = Scratch({"n": b"1"})
    with pytest.raises(WriteFailed):
        detach_executor(sim, s2, retry_path=False)
    assert s2.closed and s2.rolled_back


def test_durable_images_stored_whole_and_deduplicated() -> None:
    """Images are kept in full with sniffed MIME and sha256; duplicates are dropped."""
    m = durable_user_message("look", [PNG, JPG, PNG])

    assert [a["mime_type"] for a in m.images] == ["image/png", "image/jpeg"]
    assert agentic_image_bytes(m.images[0]) == PNG
    assert with_durable_images(m, [JPG]).images == m.images
    assert sniff_mime(b"unknown") == "image/png"


def test_wire_message_and_strict_decode() -> None:
    """One text part plus data-URL parts; a bad hash or base64 is refused."""
    m = durable_user_message("look", [PNG])
    parts = wire_message(m)

    assert parts[0] == {"type": "text", "text": "look"}
    assert parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    with pytest.raises(ValueError):
        agentic_image_bytes({**m.images[0], "sha256": "0" * 64})
    with pytest.raises(ValueError):
        agentic_image_bytes({"data": "not base64!"})


def test_scope_prior_curriculum_visuals_strips_pixels() -> None:
    """At a project boundary pixels go; a note keeps the count and the sha list."""
    m = durable_user_message("old", [PNG])
    out = scope_prior_curriculum_visuals([m, U("plain")])

    assert out[0].images == () and hashlib.sha256(PNG).hexdigest() in out[0].content
    assert out[1] == U("plain")
