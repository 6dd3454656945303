"""The conversation samples memsim ships (sim/data/samples/), for tests, docs and the demo (issue 28).

Written for memsim, not copied from the datasets (``dev/conversation_samples.py`` writes them): each takes
a released shape, small enough to read. :data:`SAMPLES` maps a sample's short name to its file and the
workload kind that reads it (``memsim bench --workload KIND:FILE``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from sim.errors import UsageError

#: Short name -> (file name, workload kind).
SAMPLES: dict[str, tuple[str, str]] = {
    "longmemeval_s": ("longmemeval_s_sample.json", "longmemeval"),
    "longmemeval_oracle": ("longmemeval_oracle_sample.json", "longmemeval"),
    "longmemeval_m": ("longmemeval_m_sample.json", "longmemeval"),
    "locomo": ("locomo_sample.json", "locomo"),
    "native": ("native_conversation.jsonl", "native"),
    # Long enough that the designs differ at the windows fitted to them (issue 38; memsim demo).
    "locomo_demo": ("locomo_demo_sample.json", "locomo"),
    "longmemeval_demo": ("longmemeval_demo_sample.json", "longmemeval"),
}


def sample_path(name: str) -> Path:
    """The path of shipped sample *name*: a short name of :data:`SAMPLES` (``"locomo"``) or its file
    name (``"locomo_sample.json"``)."""
    files = {short: file for short, (file, _) in SAMPLES.items()}
    file = files.get(name, name)
    if file not in files.values():
        raise UsageError(f"no conversation sample {name!r} (samples: {', '.join(SAMPLES)})")
    return Path(str(resources.files("sim").joinpath("data", "samples", file)))


def sample_kind(name: str) -> str:
    """The workload kind that reads sample *name* (``"longmemeval"``, ``"locomo"`` or ``"native"``)."""
    for short, (file, kind) in SAMPLES.items():
        if name in (short, file):
            return kind
    raise UsageError(f"no conversation sample {name!r} (samples: {', '.join(SAMPLES)})")
