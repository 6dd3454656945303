"""Steps: ``claim``, ``complete``, ``step-status``, ``wait-for`` (RT-RTE-step-control, MEM-OBJ-handoff)."""

from __future__ import annotations

from typing import Any

from sim.objects import PreconditionFailed
from systems.tracecraft import faults as fp
from systems.tracecraft.model.bucket import loads
from systems.tracecraft.model.core import HF_SETTLE_S, LEASE_S, WAIT_POLL_S, ClientCore, Gen
from systems.tracecraft.protocol import TracecraftError, heartbeat_age_s, normalize_step_id


class StepsService(ClientCore):
    """Steps commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- steps (RT-RTE-step-control, RT-OBJ-step-state, MEM-OBJ-handoff) ------------------------------
    def claim(self, step_id: str) -> Gen:
        """(RT-RTE-step-control, RT-OBJ-step-state) Conditional PUT of claim.json, then status PUT.

        Raises :class:`TracecraftError` ("Step X already claimed by <owner>") on PreconditionFailed.
        Crash point ``tracecraft.claim.after_claim``. On the hf backend the conditional put is racy.
        """
        sid = normalize_step_id(step_id)
        yield from self._command()
        if self.variant.has("claim-refuses"):
            raise TracecraftError(f"Step {step_id} already claimed by unknown")
        if self.variant.has("claim-refuses-terminal"):
            yield from self._rt()
            st = self.b.get_json(f"steps/{sid}/status.json") or {}
            if st.get("status") == "complete":
                raise TracecraftError(f"Step {step_id} is already complete")
        now = self.clock.iso()
        doc = {"agent": self.agent_id, "claimed_at": now}
        try:
            yield from self._conditional_put(f"steps/{sid}/claim.json", doc)
        except PreconditionFailed:
            yield from self._rt()
            owner = (self.b.get_json(f"steps/{sid}/claim.json") or {}).get("agent", "unknown")
            taken = False
            if self.variant.has("claim-lease") and owner != self.agent_id:
                taken = yield from self._lease_takeover(sid, doc)
            if not taken:
                self._op("claim", phase="fail", step=sid, owner=owner)
                raise TracecraftError(f"Step {step_id} already claimed by {owner}") from None
        self.sim.faults.point(fp.CLAIM_AFTER_CLAIM)
        yield from self._rt()
        self.b.put_json(
            f"steps/{sid}/status.json", {"status": "in_progress", "agent": self.agent_id, "started_at": now}
        )
        self._print(f"Claimed step {step_id} as {self.agent_id}")
        if self.tc.backend == "hf":  # ``cli/steps.py:66-74``
            self._eprint(
                "warning: claims on the HuggingFace backend are best-effort (racy) — another agent may also "
                "believe it won this step. Use an S3-compatible backend for atomic claims."
            )
        self._op("claim", step=sid)
        return sid

    def _conditional_put(self, key: str, doc: Any) -> Gen:
        """The backend's ``put_json(if_none_match=True)``: S3's ``IfNoneMatch="*"``; on HF exists-then-write
        (``hf.py:52-63``: racy). The hf-verify-claim fix waits :data:`HF_SETTLE_S` after the write and
        reads the claim back (Fischer's mutual exclusion: safe while every write lands within that time of
        its existence check); another owner means the claim was lost."""
        yield from self._rt()
        if self.b.backend != "hf":
            self.b.put_json(key, doc, if_none_match=True)
            return
        if self.b.exists(key):
            raise PreconditionFailed(key)
        yield from self._rt()
        self.b.put_json(key, doc)
        if self.variant.has("hf-verify-claim"):
            yield self.sim.timeout(HF_SETTLE_S)
            yield from self._rt()
            if (self.b.get_json(key) or {}).get("agent") != doc.get("agent"):
                raise PreconditionFailed(key)

    def _lease_takeover(self, sid: str, doc: dict[str, Any]) -> Gen:
        """claim-lease fix: take over a claim older than LEASE_S on a non-complete step."""
        yield from self._rt()
        st = self.b.get_json(f"steps/{sid}/status.json") or {}
        yield from self._rt()
        raw = self.b.get_bytes(f"steps/{sid}/claim.json")
        old = loads(raw) or {}
        age = heartbeat_age_s(old.get("claimed_at"), self.clock.datetime())
        if st.get("status") == "complete" or age is None or age <= LEASE_S:
            return False
        return self.b.compare_and_put_json(f"steps/{sid}/claim.json", doc, raw)

    def complete(
        self,
        step_id: str,
        note: str = "",
        to: str | None = None,
        next_action: str | None = None,
        blocked: bool = False,
        needs_review: bool = False,
        changed_files: list[str] | None = None,
        force: bool = False,
    ) -> Gen:
        """(RT-RTE-step-control, RT-OBJ-step-state, MEM-OBJ-handoff) Ownership check, status PUT, handoff PUT.

        A step with no claim can be completed by anyone; ``force`` skips the check and never rewrites the
        claim (faithful). *changed_files* stands for ``--changed-files-from-git`` (None: flag off).
        Raises :class:`TracecraftError` for both flags or a foreign claim. Crash point
        ``tracecraft.complete.after_status`` (``after_handoff`` with the handoff-first fix).
        """
        if blocked and needs_review:
            raise TracecraftError("Use at most one of --blocked / --needs-review")
        sid = normalize_step_id(step_id)
        yield from self._command()
        if self.variant.has("complete-refuses"):
            raise TracecraftError(f"Step {step_id} cannot be completed")
        now = self.clock.iso()  # taken before any store call, as upstream (``cli/steps.py:113``)
        yield from self._rt()
        claim = self.b.get_json(f"steps/{sid}/claim.json") or {}
        owner = claim.get("agent")
        if owner not in (None, self.agent_id) and not force:
            self._op("complete", phase="fail", step=sid, owner=owner)
            raise TracecraftError(
                f"Step {step_id} is claimed by '{owner}', not '{self.agent_id}'. "
                "Pass --force to complete it anyway (e.g. if the claim-holder crashed)."
            )
        state = "blocked" if blocked else "needs_review" if needs_review else "complete"
        yield from self._rt()
        started = (self.b.get_json(f"steps/{sid}/status.json") or {}).get("started_at", now)
        status: dict[str, Any] = {"status": state, "agent": self.agent_id, "started_at": started}
        if state == "complete":
            status["completed_at"] = now
        handoff: dict[str, Any] = {
            "schema": 2,
            "from_agent": self.agent_id,
            "from_step": step_id,
            "next_agent": to,
            "state": state,
            "next_action": next_action,
            "note": note,
            "created_at": now,
        }
        if changed_files is not None:
            handoff["changed_files"] = list(changed_files)
        if force and self.variant.has("claim-lease"):
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/claim.json", {"agent": self.agent_id, "claimed_at": now})
        if self.variant.has("handoff-first"):
            handoff["id"] = self._hex()
            status["handoff"] = handoff["id"]
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoffs/{handoff['id']}.json", handoff)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoff.json", handoff)
            self.sim.faults.point(fp.COMPLETE_AFTER_HANDOFF)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/status.json", status)
        else:
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/status.json", status)
            self.sim.faults.point(fp.COMPLETE_AFTER_STATUS)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoff.json", handoff)
        label = {"complete": "Completed", "blocked": "Blocked", "needs_review": "Needs review on"}[state]
        receipt = f"{label} step {step_id}" + (f" → handed off to {to}" if to else "")
        if changed_files is not None:
            receipt += f" ({len(changed_files)} changed file(s))"
        self._print(receipt)
        self._op("complete", step=sid, state=state, force=force)
        return state

    def effective_status(self, sid: str) -> Gen:
        """(RT-OBJ-step-state) status.json → (status, agent); else claim.json → in_progress; else pending."""
        yield from self._rt()
        st = self.b.get_shared(f"steps/{sid}/status.json")
        if st is not None:
            return (st.get("status", "unknown"), st.get("agent", "?"))
        yield from self._rt()
        cl = self.b.get_shared(f"steps/{sid}/claim.json")
        if cl is not None:
            return ("in_progress", cl.get("agent", "?"))
        return ("pending", None)

    def step_status(self, step_id: str) -> Gen:
        """(RT-RTE-step-control) The effective status of one step."""
        yield from self._command()
        out = yield from self.effective_status(normalize_step_id(step_id))
        self._print(f"{step_id}: {out[0]}" + ("" if out[1] is None else f" (agent: {out[1]})"))
        self._op("step_status", step=step_id, status=out[0])
        return out

    def wait_for(self, step_ids: list[str], timeout: float = 300) -> Gen:
        """(RT-BAP-step-polling, RT-RTE-step-control) Poll every 5 s until every step is complete
        (``cli/steps.py:182-221``).

        The loop runs while the agent's clock is before ``start + timeout``; each pass normalizes each id
        (a bad id raises there, after the earlier ids were read; with ``timeout=0`` the loop never runs
        and the result is a timeout). A blocked step raises at once; needs_review keeps waiting and is
        named in the progress line, which goes to stderr. Never reads the handoff (the handoff-reader fix
        returns them: ``{sid: handoff}``). Raises :class:`TracecraftError`.
        """
        yield from self._command()
        sids: list[str] = []
        deadline = self.clock.seconds() + timeout
        while self.clock.seconds() < deadline:
            all_done, review = True, []
            sids = []
            for step_id in step_ids:
                sid = normalize_step_id(step_id)
                sids.append(sid)
                status, agent = yield from self.effective_status(sid)
                if status == "blocked":
                    self._op("wait_for", phase="fail", blocked=sid)
                    raise TracecraftError(
                        f"Step {step_id} is blocked (agent: {agent}) — it will not complete without "
                        "intervention. Resolve it and re-run wait-for."
                    )
                if status == "needs_review":
                    review.append(step_id)
                if status != "complete":
                    all_done = False
            if all_done:
                self._print(f"All steps complete: {', '.join(step_ids)}")
                break
            progress = f"Waiting... ({int(deadline - self.clock.seconds())}s remaining)"
            self._eprint(progress + (f" — needs review: {', '.join(review)}" if review else ""))
            yield self.sim.timeout(WAIT_POLL_S)
        else:
            self._op("wait_for", phase="fail", timeout=timeout)
            raise TracecraftError(f"Timeout after {timeout}s. Not all steps complete: {', '.join(step_ids)}")
        self._op("wait_for", steps=sids)
        if self.variant.has("handoff-reader"):
            out = {}
            for sid in sids:
                yield from self._rt()
                out[sid] = self.b.get_json(f"steps/{sid}/handoff.json")
            return out
        return {}
