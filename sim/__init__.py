"""memsim's shared simulation core.

One concept per module: :mod:`sim.engine` (the :class:`Simulation`), :mod:`sim.clock` (per-agent modeled
wall clocks), :mod:`sim.rng` (named seeded streams), :mod:`sim.tokens` (exact cl100k counts and design
estimators), :mod:`sim.text` (filler and fact tokens), :mod:`sim.files` (file trees), :mod:`sim.objects`
(object stores), :mod:`sim.faults` (the closed set of faults), :mod:`sim.trace` (the run's history in
SQLite), :mod:`sim.claims` (failure-mode claims) and :mod:`sim.scenario` (runnable scenarios). Nothing
system-specific lives here.
"""

from sim.clock import AgentClock
from sim.engine import Simulation
from sim.errors import MemsimError, UsageError
from sim.faults import Crash, Fault, FaultPlan, WriteFailed
from sim.text import extract_facts, fact_token, filler
from sim.tokens import count_tokens
from sim.version import __version__

__all__ = [
    "AgentClock",
    "Crash",
    "Fault",
    "FaultPlan",
    "MemsimError",
    "Simulation",
    "UsageError",
    "WriteFailed",
    "__version__",
    "count_tokens",
    "extract_facts",
    "fact_token",
    "filler",
]
