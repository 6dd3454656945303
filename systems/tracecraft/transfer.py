"""Counterexample transfer: a Tracecraft claim's example replayed on the real ``tracecraft`` CLI.

``memsim replay EXAMPLE.json --real`` calls :func:`transfer` (declared in ``design.py``). The claim's own
driver runs twice on the example: once on the model, once in a :class:`~systems.tracecraft.real.RealWorld`
where every command is a real ``tracecraft`` process (tracecraft-ai 0.2.5) against a moto server on
127.0.0.1, each agent with its own ``HOME``, working directory, ``.tracecraft.json`` and
``TRACECRAFT_AGENT``, its clock, uuids and store calls hooked (never its code) so that skew, crashes at
named points and interleavings are the model's. The example *reproduces* when the real run violates the
claim's property with the same verdict, word for word (keys, uuids and timestamps included), as the
model. Only faithful examples transfer: the real system is upstream's design. The HF Hub is a network
service memsim never calls: ``hf-racy-claims`` transfers to a local stand-in for its file system
(``huggingface_hub.HfFileSystem``), with ``exists`` and writes gated like S3's calls.

:data:`REPRODUCES` records the result per claim on tracecraft-ai 0.2.5 (``tests/test_tracecraft_
conformance.py`` re-checks every entry).
"""

from __future__ import annotations

from typing import Any

from sim.claims import FAITHFUL, Claim, Verdict
from sim.engine import Simulation
from sim.errors import UsageError
from sim.transfer import TransferResult
from sim.variant import Variant
from systems.tracecraft.real import RealWorld, require_real

#: Per claim: how its shrunk faithful counterexample transfers to tracecraft-ai 0.2.5 ("reproduces"
#: means the real CLI fails the property with the model's verdict, word for word).
_SAME = "reproduces"
REPRODUCES: dict[str, str] = {
    "tracecraft.mirror-cursor-reuse": _SAME,
    "tracecraft.stop-deletes-cursor": _SAME,
    "tracecraft.mirror-not-idempotent": _SAME,
    "tracecraft.redaction-per-chunk": _SAME,
    "tracecraft.compact-duplicates": _SAME,
    "tracecraft.meta-lost-update": _SAME,
    "tracecraft.two-mirrors": _SAME,
    "tracecraft.part-seq-overflow": _SAME,
    "tracecraft.seen-cap-replay": _SAME
    + ", with tracecraft.protocol.SEEN_CAP set to the example's cap in each process",
    "tracecraft.skew-hides-mail": _SAME,
    "tracecraft.future-key-blinds": _SAME,
    "tracecraft.shared-cursor-reshow": _SAME,
    "tracecraft.unvalidated-agent-id": _SAME,
    "tracecraft.history-newest-not-live": _SAME,
    "tracecraft.history-not-immutable": _SAME,
    "tracecraft.permanent-claim": _SAME,
    "tracecraft.completed-step-regresses": _SAME,
    "tracecraft.status-before-handoff": _SAME,
    "tracecraft.handoff-no-consumer": _SAME,
    "tracecraft.registration-not-liveness": _SAME,
    "tracecraft.session-id-ambiguity": _SAME,
    "tracecraft.artifact-collision": _SAME,
    "tracecraft.hf-racy-claims": _SAME
    + " on a local stand-in for the Hub's file system (memsim makes no network call)",
}


def run_real(claim: Claim, example: Any, world: RealWorld, seed: int = 0) -> Verdict:
    """The claim's driver on the real system (a fresh simulation of *seed*); never raises."""
    sim = Simulation(seed)
    try:
        verdict: Verdict = claim.check(sim, example, Variant(), world=world)  # type: ignore[call-arg]
        return verdict
    except UsageError:
        raise
    except Exception as exc:  # the verdict of a run that raised, as Claim.run gives it
        return Verdict(False, f"raised {type(exc).__name__}: {exc}", raised=True)
    finally:
        sim.close()


def transfer(claim: Claim, direction: str, example: Any, *, endpoint: str | None = None) -> TransferResult:
    """Replay *example* of *claim* on the real CLI; reproduced when the real verdict is the model's.

    Raises :class:`UsageError` when tracecraft-ai 0.2.5 is not installed (saying how to install it) or the
    direction is not faithful.
    """
    system = require_real()
    if direction != FAITHFUL:
        raise UsageError(
            f"only faithful examples transfer: the real system is upstream's design, and this example is "
            f"the {direction} direction's"
        )
    model = claim.run(example, FAITHFUL)
    with RealWorld(endpoint) as world:
        real = run_real(claim, example, world)
        commands = world.commands
    same = (not real.holds) and (not real.raised) and real.detail == model.detail
    if same:
        detail = f"the same violation after {commands} real commands: {real.detail}"
    elif real.holds:
        detail = f"the real CLI held ({commands} commands); the model: {model.detail}"
    else:
        detail = f"a different verdict on the real CLI: {real.detail}; the model: {model.detail}"
    return TransferResult(same, detail, system)
