"""Behaviour fingerprint of the tree: scenario outputs, trace contents and claim verdicts.

``python dev/fingerprint.py OUT.json [--system S] [--no-claims]`` writes, per scenario, the sha256 of its
summary lines and of its trace's ops and requests rows (meta excluded: it carries versions; a request's
facts as its full set's list, whatever the schema), and, per claim, the faithful direction's shrunk
example and the fixed direction's verdict under the ``ci`` profile. Two fingerprints compare with
``python dev/fingerprint.py --diff A.json B.json``: a refactor that changes no behaviour leaves them equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
import tempfile
from pathlib import Path


def _rows_hash(db: Path) -> dict[str, str]:
    """The hash of the ops rows and of the requests rows, each request's ``facts`` its full set's list
    (what schema 2 stored; schema 3 stores deltas, resolved here), so a fingerprint spans schemas."""
    from sim.trace import astuple, iter_requests

    conn = sqlite3.connect(db)
    rows = {
        "ops": conn.execute("SELECT * FROM ops ORDER BY seq"),
        "requests": map(astuple, iter_requests(db, require_complete=False)),
    }
    out = {}
    for table, found in rows.items():
        h = hashlib.sha256()
        for row in found:
            h.update(json.dumps(row, ensure_ascii=False).encode())
            h.update(b"\n")
        out[table] = h.hexdigest()[:16]
    conn.close()
    return out


def scenarios(system: str | None) -> dict[str, object]:
    from sim import scenario as sc

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, s in sorted(sc.scenarios().items()):
            if system and s.system != system:
                continue
            db = Path(tmp) / f"{name}.db"
            lines = sc.execute(name, trace_path=db)
            out[name] = {
                "summary": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16],
                **_rows_hash(db),
            }
    return out


def claims(system: str | None) -> dict[str, object]:
    from sim import claims as cl
    from sim import search

    out: dict[str, object] = {}
    for cid, c in cl.registry(system).items():
        row: dict[str, object] = {}
        for d in c.directions:
            o = search.run_direction(c, d, "ci", 0)
            if cl.EXPECT_HOLDS[d]:
                row[d] = [o.passed, o.examples]
            else:
                row[d] = json.dumps(c.encode(o.example), sort_keys=True, default=str) if o.passed else None
        out[cid] = row
        print(cid, "ok" if all(row.values()) else "FAIL", file=sys.stderr)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--system")
    ap.add_argument("--no-claims", action="store_true")
    ap.add_argument("--diff", nargs=2)
    a = ap.parse_args()
    if a.diff:
        x, y = (json.loads(Path(p).read_text()) for p in a.diff)
        bad = 0
        for part in ("scenarios", "claims"):
            for k in sorted(set(x.get(part, {})) | set(y.get(part, {}))):
                if x.get(part, {}).get(k) != y.get(part, {}).get(k):
                    bad += 1
                    print(f"{part} {k}:\n  {x.get(part, {}).get(k)}\n  {y.get(part, {}).get(k)}")
        print(f"{bad} differences")
        raise SystemExit(1 if bad else 0)
    data = {"scenarios": scenarios(a.system)}
    if not a.no_claims:
        data["claims"] = claims(a.system)
    Path(a.out).write_text(json.dumps(data, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
