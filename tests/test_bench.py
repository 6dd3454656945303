"""The context-budget benchmark harness: metrics, the oracle bound, outputs, determinism, Dask."""

import csv
import json

import pytest

from sim import bench, bench_outputs
from sim.workload import make_workload


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_workload_is_seeded_and_logs_what_it_drew() -> None:
    """The same seed gives the same workload; probes only ask for facts seen earlier."""
    a, b = make_workload(3, 30), make_workload(3, 30)

    assert a == b
    assert a != make_workload(4, 30)
    seen: set[str] = set()
    for s in a.steps:
        if s.probe:
            assert s.probe in seen
            assert s.probe in s.question
        seen |= {f.split("=")[0] for f in s.facts}
    assert a.drawn.steps == 30 and a.drawn.calm_steps >= 10


def test_oracle_recalls_every_probe_within_budget() -> None:
    """The oracle's requests fit the window and carry every probed fact."""
    row = bench.run_task(bench.Task("oracle", 4000, 1, 40))

    assert row["recall"] == 1.0
    assert row["over_window"] == 0
    assert row["tokens_max"] <= 4000
    assert row["live"] is True


@pytest.mark.design_level
def test_every_design_runs_and_is_deterministic() -> None:
    """Every available design completes a small workload, twice with identical metrics."""
    tasks = bench.tasks_for(bench.available_designs(), [6000], 1, 20)

    first = bench.run_sweep(tasks, progress=False)
    second = bench.run_sweep(tasks, progress=False)

    assert _strip(first) == _strip(second)
    for r in first:
        assert r["requests"] == r["steps"]
        assert r["recall"] is None or 0.0 <= r["recall"] <= 1.0
        assert r["recall_vs_oracle"] is None or r["recall_vs_oracle"] >= 0.0


def test_outputs_are_written(tmp_path) -> None:
    """SQLite, CSV and the three plots are produced."""
    rows = bench.run_sweep(bench.tasks_for(["oracle"], [3000, 9000], 1, 12), progress=False)

    paths = bench_outputs.write_outputs(rows, tmp_path)

    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "results.db",
            "results.csv",
            "aggregate.csv",
            "tokens_over_time.png",
            "recall_vs_budget.png",
            "overflow_vs_budget.png",
        ]
    )
    with open(tmp_path / "results.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 2


def test_local_processes_match_serial() -> None:
    """Two worker processes give the same rows as the serial run."""
    tasks = bench.tasks_for(["oracle"], [3000, 9000], 2, 12)

    assert _strip(bench.run_sweep(tasks, workers=2, progress=False)) == _strip(
        bench.run_sweep(tasks, progress=False)
    )


@pytest.mark.design_level
def test_forked_workers_match_serial_in_a_fresh_process(tmp_path) -> None:
    """``memsim bench --workers 2`` from a fresh, single-threaded process (where, on Linux, the workers
    are forks) gives every design's rows exactly as ``--workers 1`` does, timing aside."""
    import subprocess
    import sys

    code = (
        "import json, sys, threading\n"
        "import sim.pool as p\n"
        "from sim import bench, bench_outputs\n"
        "used = []\n"
        "orig = p._context\n"
        "p._context = lambda fork=False: used.append(orig(fork).get_start_method()) or orig(fork)\n"
        "tasks = bench.tasks_for(bench.parse_designs(None, []), [3000, 9000], 2, 16)\n"
        "two = bench.run_sweep(tasks, workers=2, progress=False)\n"
        "one = bench.run_sweep(tasks, progress=False)\n"
        "strip = lambda rows: [{k: v for k, v in r.items() if k != 'seconds'} for r in rows]\n"
        "print(json.dumps({'used': used, 'same': strip(two) == strip(one), 'rows': len(one)}))\n"
    )
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path)
    result = json.loads(out.stdout)

    assert result["same"] and result["rows"] == 2 * 2 * len(bench.available_designs())
    if sys.platform == "linux":  # elsewhere the workers are fresh interpreters
        assert result["used"] == ["fork"]


def test_plots_drawn_by_a_forked_helper_are_the_files_drawn_here(tmp_path) -> None:
    """``write_outputs(workers=2)`` from a fresh, single-threaded process draws a plot in a fork (on Linux)
    while it writes the tables, and every file is byte for byte what ``workers=1`` writes."""
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "import sim.pool as p\n"
        "from sim import bench, bench_outputs\n"
        "used = []\n"
        "orig = p._context\n"
        "p._context = lambda fork=False: used.append(orig(fork).get_start_method()) or orig(fork)\n"
        "rows = bench.run_sweep(bench.tasks_for(['oracle', 'nemsy'], [3000, 9000], 2, 16), progress=False)\n"
        "bench_outputs.write_outputs(rows, __import__('pathlib').Path('one'))\n"
        "bench_outputs.write_outputs(rows, __import__('pathlib').Path('two'), workers=2, html=True)\n"
        "print(json.dumps(used))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )

    if sys.platform == "linux":  # elsewhere everything is drawn in this process (no safe fork)
        assert json.loads(out.stdout) == ["fork"]
    one = {p.name: p.read_bytes() for p in (tmp_path / "one").iterdir()}
    two = {p.name: p.read_bytes() for p in (tmp_path / "two").iterdir()}
    assert set(two) == set(one) | {"index.html"} and len(one) == 6
    assert all(two[name] == data for name, data in one.items())


@pytest.mark.slow
def test_dask_executor_matches_local() -> None:
    """The same sweep on a local Dask distributed cluster gives the same rows as the local run."""
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    tasks = bench.tasks_for(["oracle"], [3000], 2, 12)

    on_dask = bench.run_sweep(tasks, workers=2, executor="dask", progress=False)

    assert _strip(on_dask) == _strip(bench.run_sweep(tasks, progress=False))


# -- scheduling and reuse within a worker ---------------------------------------------------------
def test_queue_learns_each_designs_cost_and_puts_the_costly_groups_first() -> None:
    """The queue starts in volume order; once cells report their seconds, the groups left are ordered by
    each design's learned seconds per volume (a design not seen yet costs the mean of those seen), so
    the last groups to run are the cheap ones."""
    from sim.bench.executors import _Queue

    def group(design: str, seed: int, first: int) -> list:
        # On a user's workload file every cell has the same volume, so only the learned rates order them.
        cells = enumerate((3000, 9000))
        return [(first + k, bench.Task(design, b, seed, workload_file="w.jsonl")) for k, b in cells]

    groups = [group(d, s, 10 * s + 2 * k) for s in (0, 1, 2) for k, d in enumerate(("cheap", "dear", "new"))]
    q = _Queue(groups)
    seed0 = [q.take() for _ in range(2)]
    assert [g[0][1].design for g in seed0] == ["cheap", "dear"]  # ties keep task order

    for g in seed0:
        for i, t in g:
            q.learn(i, {"seconds": 10.0 if t.design == "dear" else 1.0})

    left = []
    while (g := q.take()) is not None:
        left.append((g[0][1].design, g[0][1].seed))
    cost = {"dear": 10.0, "new": 5.5, "cheap": 1.0}  # "new": the mean rate of those seen
    assert len(left) == 7
    assert [cost[d] for d, _s in left] == sorted((cost[d] for d, _s in left), reverse=True)
    assert left[0][0] == "dear" and left[-1][0] == "cheap"


def test_a_group_is_one_designs_cells_on_one_seed() -> None:
    """With workers, a group is one design's cells at every window of one seed (never split by window: they
    share their texts), the costliest estimated seed first; every cell runs exactly once."""
    from sim.bench.executors import group_tasks, work_estimate

    tasks = bench.tasks_for(["oracle"], [3000, 9000, 27000], 3, None)
    tasks += bench.tasks_for([bench.DesignSpec("oracle2", "oracle")], [3000, 9000, 27000], 3, None)

    groups = group_tasks(tasks, workers=2)

    assert sorted(i for g in groups for i in g) == list(range(len(tasks)))
    assert len(groups) == 6
    for g in groups:
        assert len({(tasks[i].seed, tasks[i].design) for i in g}) == 1
        assert sorted(tasks[i].budget for i in g) == [3000, 9000, 27000]
    seed_size = {s: sum(work_estimate(t) for t in tasks if t.seed == s) for s in range(3)}
    order = list(dict.fromkeys(tasks[g[0]].seed for g in groups))
    assert order == sorted(seed_size, key=lambda s: -seed_size[s])


def test_conversation_units_are_grouped_by_instance_in_file_order() -> None:
    """A conversation unit's seed is its instance on the file: with workers, a group is one instance's
    unit of one design, and the groups come instance after instance (a worker reads the file forward, as
    one worker does; grouping by design alone made each worker re-read the file per design and left 7
    unequal groups for 2 workers: ``conversations.workers`` fell to 1.696x)."""
    from sim.bench.executors import group_tasks
    from sim.conversations.run import conversation_tasks

    specs = [bench.DesignSpec("nemsy", "nemsy"), bench.DesignSpec("rsiagent", "rsiagent")]
    tasks = conversation_tasks(specs, [8000, 16000], "longmemeval", "conv.json", 4)

    groups = group_tasks(tasks, workers=2)

    assert sorted(i for g in groups for i in g) == list(range(len(tasks)))
    assert all(len({(tasks[i].seed, tasks[i].design) for i in g}) == 1 for g in groups)
    instances = [tasks[g[0]].seed for g in groups]
    assert instances == sorted(instances) and set(instances) == {0, 1, 2, 3}


def test_a_worker_keeps_to_its_seed_then_starts_a_free_one_then_shares_the_last() -> None:
    """The queue hands a worker the groups of the seed it holds; a worker whose seed has none left starts
    the costliest seed no other worker holds, and only when every seed left is held does it take from
    another worker's seed (the end of the sweep). A costly design learned on one seed goes first on the
    others."""
    from sim.bench.executors import _Queue, group_tasks

    tasks = bench.tasks_for(["oracle", bench.DesignSpec("oracle2", "oracle")], [3000, 9000], 3, 12)
    groups = [[(i, tasks[i]) for i in g] for g in group_tasks(tasks, workers=2)]
    q = _Queue(groups)

    def seed(g: list) -> int:
        return int(g[0][1].seed)

    a, b = q.take(1), q.take(0)
    assert a is not None and b is not None and seed(a) != seed(b)
    for i, _t in a:
        q.learn(i, {"seconds": 1.0})
    a2 = q.take(1)
    assert a2 is not None and seed(a2) == seed(a)
    for i, t in a2:  # one design turns out 10 times dearer per volume than the other
        q.learn(i, {"seconds": 10.0 if t.design == a2[0][1].design else 1.0})
    dear = a2[0][1].design
    a3 = q.take(1)  # a's seed is done and b holds its own: a starts the third seed, its dear design first
    assert a3 is not None and seed(a3) not in (seed(a), seed(b)) and a3[0][1].design == dear
    a4 = q.take(1)
    assert a4 is not None and seed(a4) == seed(a3)
    last = q.take(1)  # every seed left is b's: a shares it
    assert last is not None and seed(last) == seed(b)
    assert q.take(0) is None and q.take(1) is None


def test_groups_are_ordered_largest_first() -> None:
    """The largest estimated groups go first, so the last ones to finish are small."""
    from sim.bench.executors import group_tasks, work_estimate

    tasks = bench.tasks_for(["oracle"], [3000], 6, None)
    groups = group_tasks(tasks, workers=1)
    sizes = [sum(work_estimate(tasks[i]) for i in g) for g in groups]

    assert sizes == sorted(sizes, reverse=True)


def test_a_seed_workload_is_made_once_per_process() -> None:
    """``shared_workload`` gives the seed's workload (equal to a fresh one) and the same object to the next
    cell; a workload too long to keep is generated afresh and not held."""
    from sim import workload as wl

    first = wl.shared_workload(11, 25)

    assert first == make_workload(11, 25)
    assert wl.shared_workload(11, 25) is first
    assert wl.shared_workload(11, 26) is not first
    huge = wl.shared_workload(12, 200_000)
    assert (12, 200_000) not in wl._SHARED
    assert huge.drawn == make_workload(12, 200_000).drawn
    assert sum(wl._chars_bound(w.drawn) for w in wl._SHARED.values()) <= wl.WORKLOAD_MEMO_CHARS


def test_a_workload_file_is_read_once_until_it_changes(tmp_path) -> None:
    """A user's workload file is parsed once per process; a change to the file is read again."""
    import json as _json
    import os

    from sim import workload as wl

    path = tmp_path / "w.jsonl"
    lines = [
        {"observation": "saw FACT-0001=teal", "facts": ["FACT-0001=teal"]},
        {"observation": "x", "probe": "FACT-0001"},
    ]
    path.write_text("\n".join(_json.dumps(x) for x in lines) + "\n")

    first = wl.shared_workload_file(path)
    again = wl.shared_workload_file(str(path))
    path.write_text(path.read_text() + _json.dumps({"observation": "more"}) + "\n")
    os.utime(path, ns=(1, 1))
    changed = wl.shared_workload_file(path)

    assert again is first
    assert len(first) == 2 and len(changed) == 3
    assert changed.steps[:2] == first.steps


def test_user_workload_rows_are_the_same_serial_and_in_workers(tmp_path) -> None:
    """Cells on a user's workload file give the same rows whether the file is shared in one process or
    read by each worker."""
    import json as _json

    path = tmp_path / "w.jsonl"
    rows = [
        {"observation": f"step {i} FACT-{i + 1:04d}=teal", "facts": [f"FACT-{i + 1:04d}=teal"]}
        for i in range(12)
    ]
    rows += [{"observation": "q", "probe": "FACT-0003"}, {"observation": "calm", "phase": "calm"}]
    path.write_text("\n".join(_json.dumps(x) for x in rows) + "\n")
    tasks = bench.tasks_for(["oracle"], [3000, 9000], 1, None, str(path))

    serial = bench.run_sweep(tasks, progress=False)

    assert _strip(bench.run_sweep(tasks, workers=2, progress=False)) == _strip(serial)
    assert [r["recall"] for r in serial] == [1.0, 1.0]


# -- benchmarks/run_all.py ------------------------------------------------------------------------
def test_run_all_reports_every_script_and_a_failed_one_as_a_row(tmp_path) -> None:
    """``run_all`` runs each ``bench_*.py`` with ``--json``; a script that fails becomes one failed row and
    does not hide the others; the page has every goal, its command and the machine."""
    import subprocess
    import sys
    from pathlib import Path

    good = (
        "import json, sys\n"
        "path = sys.argv[sys.argv.index('--json') + 1]\n"
        "goal = {'key': 'toy.ratio', 'goal': 'toy vs floor', 'value': 2.5, 'target': '>= 2x', 'ok': True,\n"
        "        'detail': '2 s vs 5 s', 'unit': 'x'}\n"
        "open(path, 'w').write(json.dumps({'title': 'toy', 'goals': [goal]}))\n"
    )
    (tmp_path / "bench_good.py").write_text(good)
    (tmp_path / "bench_broken.py").write_text("raise SystemExit('cannot measure: no such design')\n")
    (tmp_path / "bench_silent.py").write_text("print('no json written')\n")
    out = tmp_path / "benchmarks.md"
    root = Path(__file__).resolve().parent.parent

    proc = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "run_all.py"), "--dir", str(tmp_path), "--out", str(out)],
        capture_output=True, text=True, cwd=root, timeout=120,
    )  # fmt: skip

    page = out.read_text()
    assert proc.returncode == 1
    assert "| toy vs floor (`toy.ratio`) | 2.5x | >= 2x | yes | 2 s vs 5 s |" in page
    assert (
        "did not report (`broken.failed`) | - | - | **no** | exited 1: cannot measure: no such design |"
        in page
    )
    assert "(`silent.failed`)" in page and "exited 0 but wrote no --json file" in page
    assert "1 of 1 goals met; 2 script(s) did not report (bench_broken.py, bench_silent.py)." in page
    assert "Machine: " in page and "CPUs" in page
    assert "Floors (at the start and at the end of the run" in page
    assert " M events/s; tiktoken cl100k " in page and " MB/s. " in page


def test_run_all_assembles_a_page_from_scripts_run_separately(tmp_path) -> None:
    """``run_all --assemble`` writes the page from goals documents scripts wrote with ``--json`` (hours-long
    ones run apart): each row keeps the command that wrote it, the ``--json`` path shown as FILE; a file
    that is not a goals document is refused with one error line and no page."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    goal = {"key": "memory.toy", "goal": "toy cell", "value": 120.0, "target": "< 500 MB", "ok": True,
            "detail": "8k: 100 MB at 25,000", "unit": "MB"}  # fmt: skip
    doc = tmp_path / "toy.json"
    command = f"benchmarks/bench_memory.py --designs toy --json {doc}"
    machine = {"processor": "TestCPU", "cpus": 2}
    failed = {"key": "run.toy", "goal": "toy run", "value": float("nan"), "target": "< 500 MB", "ok": False,
              "detail": "failed: exited 2", "unit": "MB"}  # fmt: skip
    goals = [goal, failed]  # a measurement that failed has no figure (NaN)
    doc.write_text(json.dumps({"title": "t", "command": command, "machine": machine, "goals": goals}))
    out = tmp_path / "page.md"
    root = Path(__file__).resolve().parent.parent
    run_all = [sys.executable, str(root / "benchmarks" / "run_all.py")]

    proc = subprocess.run([*run_all, "--assemble", str(doc), "--out", str(out)], capture_output=True,
                          text=True, cwd=root, timeout=120)  # fmt: skip
    page = out.read_text()
    assert proc.returncode == 0, proc.stderr
    assert "| toy cell (`memory.toy`) | 120.0 MB | < 500 MB | yes | 8k: 100 MB at 25,000 |" in page
    assert "`python benchmarks/bench_memory.py --designs toy --json FILE`" in page
    assert "Assembled from the goals documents" in page and "Machine: TestCPU, 2 CPUs" in page
    assert "| toy run (`run.toy`) | - | < 500 MB | **no** | failed: exited 2 |" in page
    assert "1 of 2 goals met." in page

    (tmp_path / "bad.json").write_text("[1]")
    other = tmp_path / "other.md"
    bad = subprocess.run([*run_all, "--assemble", str(tmp_path / "bad.json"), "--out", str(other)],
                         capture_output=True, text=True, cwd=root, timeout=120)  # fmt: skip
    assert bad.returncode == 2 and not other.exists()
    assert bad.stderr.count("\n") == 1 and "not a goals document" in bad.stderr


def test_a_benchmark_goal_is_met_as_its_target_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Goal.of`` checks the value against the target text itself (``>= 1/3`` is one third, not 0.33),
    so the table's target and its yes/no cannot disagree; a target it cannot read is an error."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from harness import Goal, meets

    assert meets(0.334, ">= 1/3") and not meets(0.333, ">= 1/3")
    assert meets(1023.9, "< 1,024 KB") and not meets(1024, "< 1,024 KB, flat")
    assert meets(1.25, "<= 1.25") and not meets(0, "> 0") and meets(-5, "(reported)")
    assert Goal.of("k", "g", 2.0, ">= 1.8x").ok and not Goal.of("k", "g", 2.0, ">= 1.8x", also=False).ok
    with pytest.raises(ValueError, match="not a comparison"):
        meets(1, "32/960")


def test_a_benchmark_figure_is_never_rounded_across_its_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables print three significant digits unless fewer would read as the other side of the target
    (a ratio of 1.797 printed ``1.8x`` beside ``>= 1.8x`` and **no**)."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from harness import meets, shown

    assert shown(1.797, "x", ">= 1.8x") == "1.797x" and shown(1.83, "x", ">= 1.8x") == "1.83x"
    assert shown(1.1004, "x", "<= 1.10x") == "1.1004x" and shown(1.0999, "x", "<= 1.10x") == "1.1x"
    assert shown(0.04991, "x", ">= 1/3") == "0.0499x" and shown(1.797, "x") == "1.8x"
    assert shown(175.84, "MB", "< 500 MB") == "175.8 MB"
    for value in (0.3333, 0.33334, 1.79951, 1.8, 2.0):
        for target in (">= 1/3", ">= 1.8x", "<= 1.8x"):
            assert meets(float(shown(value, "x", target)[:-1]), target) == meets(value, target)
