"""``memsim replay``: rerun a saved claim example, or a scenario from its trace, trusting nothing in the file.

A **saved example** (``memsim claims --save DIR`` writes one per found counterexample) is read with the
size and nesting limits of :mod:`sim.limits`, its claim looked up in the installed designs, and its
example validated against the claim's declared example type before it runs; it is replayed in the
direction it was saved in (or ``--variant``). A faithful or off example must still violate its claim, a
fixed or combined replay must hold: otherwise the exit code is 1.

A **trace** is accepted only if it is complete and of a schema this memsim reads (:func:`sim.trace.read_meta`;
a schema-2 trace's requests are compared with the replay's by their full fact sets). Its meta
names the scenario, seed, parameters and faults; each is validated as ``memsim run`` validates them
(the scenario's own parameter model and bounds, the fault parser). What replay does *not* take from the
file: the object store (the run uses ``--store`` from the command line, memory by default, so a trace
naming an endpoint dials nothing) and any script path (a trace of a script scenario replays only with
``--scenario PATH`` given on the command line). The new trace must equal the old one in every op and
request, and in seed, scenario, parameters and faults.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim import claims as cl
from sim.errors import UsageError
from sim.limits import decode_text, load_json, read_bounded
from sim.outputs import Outputs
from sim.trace import OpRecord, RequestRecord, read_meta
from sim.trace import is_trace as is_trace  # moved to sim.trace (issue 41); `rp.is_trace` still reads


class SavedFile(BaseModel):
    """The JSON of a saved example."""

    model_config = ConfigDict(extra="allow", strict=True)

    claim: str = Field(max_length=200)
    variant: str = Field(default=cl.FAITHFUL, max_length=40)
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    example: Any = None


def load_example(text: str, source: str = "example") -> tuple[cl.Claim, str, Any]:
    """Parse and validate a saved example: its claim, direction and decoded example (one-line errors)."""
    data = load_json(text, "saved example", source)
    if not isinstance(data, dict):
        raise UsageError(f"{source} is not a saved claim example (expected a JSON object)")
    try:
        saved = SavedFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "file"
        raise UsageError(f"{source} is not a saved claim example: {where}: {err['msg']}") from exc
    claim = cl.get(saved.claim)
    if saved.variant not in claim.directions:
        raise UsageError(
            f"{source}: unknown variant {saved.variant!r}: expected one of {', '.join(claim.directions)}"
        )
    return claim, saved.variant, decode_checked(claim, saved.example, source)


def decode_checked(claim: cl.Claim, raw: Any, source: str) -> Any:
    """*raw* decoded by the claim, after checking it against the claim's declared example type."""
    if claim.example_type is not None:
        from pydantic import TypeAdapter

        try:
            TypeAdapter(claim.example_type).validate_python(raw, strict=False)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "example"
            raise UsageError(
                f"{source}: the example does not fit claim {claim.id}: {where}: {err['msg']}"
            ) from exc
    try:
        return claim.decode(raw)
    except Exception as exc:
        raise UsageError(
            f"{source}: the example does not fit claim {claim.id}: {type(exc).__name__}: {exc}"
        ) from exc


def replay_example(path: Path, *, out: Path | None, variant: str | None, outputs: Outputs) -> bool:
    """Rerun a saved example into a trace; True when its direction came out as expected."""
    from sim.engine import Simulation

    text = decode_text(read_bounded(path, "saved example"), "saved example", path)
    claim, saved_variant, example = load_example(text, str(path))
    v = variant or saved_variant
    if v not in claim.directions:
        raise UsageError(f"unknown variant {v!r}: expected one of {', '.join(claim.directions)}")
    final = (out or path.parent) / f"{claim.id}.{v}.db"
    outputs.reads(path, "saved example")
    outputs.file(final, "replay trace")
    with outputs.transaction(), Simulation(0, trace_path=outputs.stage(final)) as sim:
        sim.trace.set_meta(claim=claim.id, variant=v)
        verdict = claim.run(example, v, sim)
        if verdict.raised:
            raise UsageError(f"{path}: the example does not fit claim {claim.id}: {verdict.detail}")
        sim.trace.close(complete=True)
    expected = verdict.holds == cl.EXPECT_HOLDS[v]
    state = "holds" if verdict.holds else "VIOLATED"
    want = "must hold" if cl.EXPECT_HOLDS[v] else "must be violated"
    print(f"{claim.id} [{v}]: {state}" + (f": {verdict.detail}" if verdict.detail else ""))
    print(f"example: {claim.summarize(example)}")
    print(f"replay {'as expected' if expected else 'NOT AS EXPECTED'} ({v} {want}); trace: {final}")
    return expected


#: Meta keys that must agree between a trace and its replay (the store is the replayer's own choice).
COMPARED_META = ("seed", "scenario", "params", "faults")


def replay_trace(
    path: Path, *, out: Path | None, store: str | None, script: str | None, outputs: Outputs
) -> bool:
    """Rerun the scenario a trace records; True when the new trace is identical."""
    from sim import scenario_core as sc

    meta = read_meta(path)
    if "scenario" not in meta:
        raise UsageError(f"{path} is not a scenario trace (no scenario in its meta table)")
    if "script" in meta:
        if script is None:
            raise UsageError(
                f"{path} records the script scenario {meta['script']!r}: replay it with --scenario PATH "
                "(replay never runs a script named by the file)"
            )
        scenario = sc.load_script(script)
    else:
        if script is not None:
            scenario = sc.load_script(script)
        else:
            scenario = sc.get(meta["scenario"])
    if scenario.name != meta["scenario"]:
        raise UsageError(f"{path} records scenario {meta['scenario']!r}, not {scenario.name!r}")
    seed = _meta_json(meta, "seed", path)
    params = _meta_json(meta, "params", path)
    faults = _meta_json(meta, "faults", path)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UsageError(f"{path}: meta seed {meta.get('seed')!r} is not an integer")
    if not isinstance(params, dict):
        raise UsageError(f"{path}: meta params is not a JSON object")
    if not (isinstance(faults, list) and all(isinstance(f, str) for f in faults)):
        raise UsageError(f"{path}: meta faults is not a list of fault specs")
    plan = sc.plan(scenario, seed=seed, faults=faults, store=store, params=params)
    target = (out or path.parent) / (path.stem + ".replay.db")
    outputs.reads(path, "source trace")
    outputs.file(target, "replay trace")
    if target.resolve() == path.resolve():
        raise UsageError("the replay would overwrite its source trace")
    with outputs.transaction():
        result = sc.run_plan(plan, trace_path=target, outputs=outputs)
    # Written after the run: a run that fails prints its one error line and nothing else.
    sys.stderr.write(
        f"replayed {scenario.name} (seed {plan.seed}, {len(faults)} fault(s), parameters from the trace, "
        f"store {plan.store}: the trace's own store is never used)\n"
    )
    for line in result.lines:
        print(line)
    new_meta = read_meta(target)
    same = all(new_meta.get(k) == meta.get(k) for k in COMPARED_META) and same_records(path, target)
    print(f"replay of {path.name}: {'identical trace' if same else 'TRACE DIFFERS'} ({target})")
    return same


def same_records(a: Path, b: Path) -> bool:
    """Whether two traces hold the same ops and requests, compared row by row in ``seq`` order (the
    file being checked is never loaded whole: a difference stops the comparison). Traces of two schemas
    (2 and 3: the facts column written as full lists or as deltas) compare their requests as records,
    each with its full fact set."""
    from sim.trace import TraceError, connect_readonly, iter_requests, read_meta

    schemas = {read_meta(p, require_complete=False).get("schema_version") for p in (a, b)}
    try:
        ca, cb = connect_readonly(a), connect_readonly(b)
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"cannot read {a} or {b}: {exc}") from exc
    tables = [("ops", OpRecord.__dataclass_fields__), ("requests", RequestRecord.__dataclass_fields__)]
    try:
        for table, cols in tables[: 1 if len(schemas) > 1 else 2]:
            query = f"SELECT {', '.join(cols)} FROM {table} ORDER BY seq"
            rows_a, rows_b = ca.execute(query), cb.execute(query)
            for ra, rb in itertools.zip_longest(rows_a, rows_b):
                if ra != rb:
                    return False
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"not a memsim trace database: {a}: {exc}") from exc
    finally:
        ca.close()
        cb.close()
    if len(schemas) > 1:
        with (
            closing(iter_requests(a, require_complete=False)) as reqs_a,
            closing(iter_requests(b, require_complete=False)) as reqs_b,
        ):
            return all(x == y for x, y in itertools.zip_longest(reqs_a, reqs_b))
    return True


def _meta_json(meta: dict[str, str], key: str, path: Path) -> Any:
    raw = meta.get(key)
    if raw is None:
        raise UsageError(f"{path}: meta has no {key}")
    try:
        return load_json(raw, f"meta {key} of", path)
    except UsageError as exc:
        raise UsageError(f"{path}: meta {key} {raw[:40]!r} is not valid JSON") from exc


def json_dumps(value: Any) -> str:
    """Canonical JSON for saved files."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2, default=str)
