"""Tracecraft's operations on the core object store, in upstream's CLI vocabulary (0.2.5).

:class:`Tracecraft` is one project in one bucket (``<project>/<key>``) on an :class:`sim.objects.ObjectStore`
(the in-memory store, or S3 through boto3 against moto or an endpoint). :meth:`Tracecraft.agent` gives a
:class:`Client`: one CLI configuration (agent id, host home directory for mirror state) whose commands
are SimPy generators, so agents run as concurrent processes with their own clocks (``sim.clock(agent)``,
skew and drift from the fault plan). Every store round trip first waits ``latency`` simulated seconds,
which is where concurrent commands interleave. :meth:`Client.call` drives one command to completion.

The package is split as moto splits a service: the shared client core (:mod:`.core`), the bucket view
(:mod:`.bucket`), the host harnesses (:mod:`.harness`), one module per service (:mod:`.memory`,
:mod:`.mail`, :mod:`.steps`, :mod:`.artifacts`, :mod:`.mirror`, :mod:`.sessions`, :mod:`.agents`,
:mod:`.status`) and their composition (:mod:`.client`).

Each failure-mode fix of the fidelity note §3 is a switch of :class:`sim.variant.Variant` (faithful: none).
Where the note and the seed report differ the note wins (see ``fidelity.DIFFERENCES``).

Not modeled: the click CLI, config files and credentials (a Client is the loaded config).
Not modeled: HF's own listing and file API beyond the racy check-then-write conditional put.
Not modeled: ``--follow`` Ctrl-C handling and ``--all`` discovery loops (``mirror_follow`` runs N cycles).
Not modeled: ``git diff`` (``complete`` takes the changed-file list, ``[]`` standing for a git failure).
"""

from systems.tracecraft.model.bucket import Bucket
from systems.tracecraft.model.client import Client, Tracecraft
from systems.tracecraft.model.core import (
    HF_SETTLE_S,
    LEASE_S,
    SYSTEM,
    WAIT_POLL_S,
    ClientCore,
    validate_memory_key,
    validate_recipient,
)
from systems.tracecraft.model.harness import FileTailHarness, Harness, HermesHarness, encode_cwd
from systems.tracecraft.model.tail import tail_lines, tail_lines_of_parts

__all__ = [
    "HF_SETTLE_S",
    "LEASE_S",
    "SYSTEM",
    "WAIT_POLL_S",
    "Bucket",
    "Client",
    "ClientCore",
    "FileTailHarness",
    "Harness",
    "HermesHarness",
    "Tracecraft",
    "encode_cwd",
    "tail_lines",
    "tail_lines_of_parts",
    "validate_memory_key",
    "validate_recipient",
]  # fmt: skip
