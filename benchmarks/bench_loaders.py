"""Benchmark (not a test): the conversation loaders' memory and speed on big files (issue 28).

    python benchmarks/bench_loaders.py [--quick] [--json FILE]

A synthetic ``_m``-shaped LongMemEval file (``memsim workload synth longmemeval --sessions 500 --turns
10``, about 5.7 MB of JSON per instance) is written in a temporary directory by a fresh process, then
read by fresh processes:

* ``conv.stream_rss``: the peak RSS of a process streaming every instance of a file of at least 1.5 GB
  (300 instances, 1.7 GB, 1.6 GiB; ``--quick``: 40, about 230 MB) through ``iter_instances`` (each
  instance validated and built, then dropped), against 1 GB;
* ``conv.stream_flat``: that peak against the peak of the same read of the file's first eighth (a file
  of one eighth the instances): flat memory is a ratio near 1, memory growing with the file would be 8;
* ``conv.loader_speed``: the loader against the floor ``ijson.items`` over the same file (the bare C
  parse building the same Python values, nothing validated or converted), as a ratio of CPU seconds
  (both single-threaded; CPU rather than wall time because the machine may be shared); the detail gives
  the loader's MB/s. The target, at least a quarter of the floor's speed, is what the loader's design
  costs: it builds each instance's values from ijson's C events in Python (``ijson.items`` keeps a path
  string per open level, so nested brackets could take gigabytes before a bound is checked; about as
  much again as the C parse), then validates every field and builds the frozen ``Turn`` objects (half of
  that again).

The synthesizer's own rate (MB/s) is printed in the RSS row's detail.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, command_time, fresh, parser, report

LOAD = """
import json, sys, time
from sim.conversations.formats import iter_instances
t = time.process_time()
n = turns = 0
for inst in iter_instances("longmemeval", sys.argv[1]):
    n += 1
    turns += len(inst.turns)
print(json.dumps({"cpu": time.process_time() - t, "instances": n, "turns": turns}))
"""

FLOOR = """
import json, sys, time
import ijson
t = time.process_time()
with open(sys.argv[1], "rb") as fh:
    n = sum(1 for _ in ijson.items(fh, "item", use_float=True))
print(json.dumps({"cpu": time.process_time() - t, "instances": n, "backend": ijson.backend}))
"""


def synth(path: Path, instances: int) -> float:
    """Write an ``_m``-shaped file of *instances* in a fresh process; its wall seconds."""
    argv = [sys.executable, "-m", "sim.cli", "workload", "synth", "longmemeval", "--out", str(path)]
    sizes = ["--instances", str(instances), "--sessions", "500", "--turns", "10", "--seed", "0"]
    seconds, _cpu = command_time([*argv, *sizes])
    return seconds


def goals(quick: bool) -> list[Goal]:
    instances = 40 if quick else 300
    with tempfile.TemporaryDirectory(prefix="memsim-bench-loaders-") as tmp:
        big, small = Path(tmp) / "m.json", Path(tmp) / "m_eighth.json"
        wrote = synth(big, instances)
        size = big.stat().st_size
        synth(small, instances // 8)
        full = fresh(LOAD, str(big))
        eighth = fresh(LOAD, str(small))
        floor = fresh(FLOOR, str(big))
    assert full["instances"] == floor["instances"] == instances
    mb = size / 1e6
    return [
        Goal.of(
            "conv.stream_rss",
            f"peak RSS streaming an _m-shaped file of {size / 1e9:.2f} GB",
            full["_rss_mb"],
            "< 1,024 MB",
            f"{instances} instances, {full['turns']:,} turns; synthesized at {mb / wrote:.0f} MB/s",
            unit="MB",
        ),
        Goal.of(
            "conv.stream_flat",
            "peak RSS, whole file vs its first eighth",
            full["_rss_mb"] / eighth["_rss_mb"],
            "<= 1.25",
            f"{full['_rss_mb']:.0f} MB vs {eighth['_rss_mb']:.0f} MB",
        ),
        Goal.of(
            "conv.loader_speed",
            "loader vs bare ijson.items (CPU seconds)",
            floor["cpu"] / full["cpu"],
            ">= 1/4",
            f"{full['cpu']:.1f} s vs {floor['cpu']:.1f} s ({floor['backend']}); "
            f"{mb / full['cpu']:.0f} MB/s validated",
        ),
    ]


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    a = ap.parse_args()
    report("loaders: streaming conversation files", goals(a.quick), a.json)


if __name__ == "__main__":
    main()
