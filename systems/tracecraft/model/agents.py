"""Registration and liveness: ``init`` and ``agents`` (RT-RTE-init-config, MEM-OBJ-agent-registration)."""

from __future__ import annotations

from typing import Any

from systems.tracecraft.model.core import ClientCore, Gen
from systems.tracecraft.protocol import STALE_AFTER_S, heartbeat_age_s


class AgentsService(ClientCore):
    """Agents commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- init / agents (RT-RTE-init-config, MEM-OBJ-agent-registration) -----------------------------
    def init(self) -> Gen:
        """(RT-RTE-init-config, MEM-OBJ-agent-registration, RT-OBJ-config) PUT ``agents/<id>.json``.

        Registration happens here only; nothing refreshes it (faithful).
        Not modeled: writing the config file and credential checks.
        """
        yield from self._command()
        yield from self._rt()
        self.b.put_json(f"agents/{self.agent_id}.json", self._registration())
        self._print(f"Initialized project '{self.tc.project}' as agent '{self.agent_id}'")
        self._op("init")
        return self.agent_id

    def agents(self) -> Gen:
        """(MEM-OBJ-agent-registration) ``collect_agents``: rows ``{id, status, step, heartbeat,
        heartbeat_age_s}``; status is ``"stale"`` when the age exceeds 300 s. Empty documents are skipped.

        Not modeled: the summary column (never displayed upstream either).
        """
        yield from self._command()
        out = yield from self._collect_agents(self.clock.datetime())
        if self.variant.has("agents-lists-nothing"):
            out = []
        self._op("agents", count=len(out))
        return out

    def _collect_agents(self, now: Any) -> Gen:
        """``collect_agents(store, now)`` (``protocol.py:207-231``): *now* is taken before the listing."""
        yield from self._rt()
        keys = [k for k in self.b.list_keys("agents/") if k.endswith(".json")]
        out = []
        for k in keys:
            yield from self._rt()
            doc = self.b.get_shared(k)
            if not doc:
                continue
            age = heartbeat_age_s(doc.get("heartbeat"), now)
            stale = age is not None and age > STALE_AFTER_S
            out.append(
                {
                    "id": doc.get("id", "?"),
                    "status": "stale" if stale else doc.get("status", "unknown"),
                    "step": doc.get("step"),
                    "heartbeat": doc.get("heartbeat"),
                    "heartbeat_age_s": age,
                }
            )
        return out
