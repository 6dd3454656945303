"""Frozen values of the window design: its switches (none) and lost-reason codes."""

from __future__ import annotations

from sim.variant import Switches

#: The window declares no claim (see :mod:`reference.window.claims`), so no fix and no off switch.
SWITCHES = Switches("window")

#: An evidence turn older than the newest messages that fit the window.
TRIMMED = "trimmed-out-of-window"
#: An evidence turn that fit the window but came before the first human message of the kept suffix
#: (``start_on="human"`` cut it).
START_ON = "dropped-by-start-on-human"
