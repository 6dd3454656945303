"""The oracle: it sends exactly the needed fact within the same window, the recall upper bound."""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.tokens import count_tokens
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep

ORACLE_SYSTEM_PROMPT = "You are an agent. Answer from the context."


class OracleAdapter:
    """Keeps exactly the needed facts within the budget (the recall upper bound)."""

    name = "oracle"

    def __init__(self, sim: Simulation, budget: int, drawn: Drawn, **_: Any) -> None:
        self.sim = sim
        self.budget = budget
        self.facts: dict[str, str] = {}
        self.obs_bytes = 0

    def step(self, step: WorkStep) -> ModelRequest:
        for f in step.facts:
            self.facts[f.split("=")[0]] = f
        self.obs_bytes += len(step.observation.encode())
        parts = [ORACLE_SYSTEM_PROMPT]
        if step.probe:
            parts.append(self.facts[step.probe])
            parts.append(step.question)
        room = self.budget - sum(count_tokens(p) for p in parts)
        obs = step.observation
        if count_tokens(obs) > room:
            obs = obs[: max(0, int(room * 3.5))]  # clip conservatively under the room
            while obs and count_tokens(obs) > room:
                obs = obs[: int(len(obs) * 0.9)]
        parts.insert(1, obs)
        return ModelRequest(tuple(p for p in parts if p), None, "oracle")

    def storage(self) -> StorageStats:
        size = sum(len(f) for f in self.facts.values())
        return StorageStats(size, size, len(self.facts))
