"""The claims page: every claim's four directions, its shrunk counterexamples, records and replay commands.

Input is the ledger JSON (:func:`sim.ledger.to_json`). The headline counts what a reader checks first
(counterexamples found on upstream's designs, fixed variants held, off switches rejected, all fixes held
together); the matrix shows every verdict at a glance; each claim's section prints its counterexample
literally (autoescaped) and the command that replays it. Record IDs link to the page's coverage section
(``memsim doc coverage`` data, :func:`sim.fidelity.coverage`).
"""

from __future__ import annotations

import json
from typing import Any

from sim import claims as cl
from sim.report.inputs import check_ledger
from sim.report.templating import render

#: A counterexample longer than this is cut on the page (the ledger JSON has it whole).
MAX_EXAMPLE_CHARS = 6000
DIRECTIONS = cl.DIRECTIONS
MUST_HOLD = cl.EXPECT_HOLDS
EXPECTATION = {
    "faithful": "upstream's design: must fail",
    "fixed": "the claim's fixes: must hold",
    "off": "fixes with the feature off: must fail",
    "combined": "every fix of the design: must hold",
}


def _cut(text: str) -> tuple[str, int]:
    if len(text) <= MAX_EXAMPLE_CHARS:
        return text, 0
    return text[:MAX_EXAMPLE_CHARS], len(text) - MAX_EXAMPLE_CHARS


def _same(summary: str, example: Any) -> bool:
    """Whether the printed summary already is the example (its JSON; tuples compare as the lists they
    become in the ledger file, so the page from memory equals the page from the file)."""
    try:
        return bool(json.loads(summary) == json.loads(json.dumps(example, default=str)))
    except ValueError:
        return False


def _verdict(name: str, d: dict[str, Any] | None) -> dict[str, Any]:
    """One direction's cell: status (ok/bad/na), short text, long text, example text."""
    if not isinstance(d, dict) or not d.get("declared", True):
        return {
            "name": name,
            "status": "na",
            "short": "not declared",
            "text": "not declared",
            "declared": False,
        }
    ok = bool(d.get("ok"))
    n = int(d.get("examples") or 0)
    summary = str(d.get("summary") or "")
    detail = str(d.get("detail") or "")
    if MUST_HOLD[name]:
        short = "held" if ok else "FAILED"
        text = f"held for {n:,} examples" if ok else f"FAILED after {n:,} examples"
    else:
        short = "counterexample" if ok else "NONE FOUND"
        text = f"counterexample after {n:,} examples" if ok else f"no counterexample in {n:,} examples"
    if d.get("exhaustive"):  # ``memsim claims --exhaustive``: the bound beside the verdict
        n, scope = int(d.get("cases") or 0), d.get("scope") or {}
        where = f"{n:,} of {int(d.get('total') or 0):,} cases in canonical order"
        found = "minimal counterexample" if not MUST_HOLD[name] else "FAILED"
        text = f"holds for all {n:,} cases within scope" if d.get("holds_all") else f"{found} at case {where}"
        if not MUST_HOLD[name] and d.get("holds_all"):
            text = f"no counterexample in all {n:,} cases within scope"
        text += f"; scope: {scope.get('domain', '')}"
        hyp = d.get("hypothesis") or {}
        if hyp.get("summary") and not hyp.get("same"):
            text += f"; Hypothesis shrank to a larger one: {hyp['summary']}"
    example = d.get("example")
    shown, cut = _cut(summary)
    pretty = ""
    if example is not None and not _same(summary, example):
        pretty = json.dumps(example, ensure_ascii=False, sort_keys=True, indent=1, default=str)
    pretty, pretty_cut = _cut(pretty)
    return {
        "name": name,
        "status": "ok" if ok else "bad",
        "short": short,
        "text": text,
        "declared": True,
        "summary": shown,
        "summary_cut": cut,
        "detail": detail,
        "example_json": pretty,
        "example_cut": pretty_cut,
        "seconds": d.get("seconds"),
        "examples": n,
        "has_example": example is not None,
    }


def _replays(row: dict[str, Any], cells: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """``(direction, command, note)`` for each direction with something to replay."""
    cid = row["claim"]
    out = []
    f, o = cells["faithful"], cells["off"]
    if f["declared"] and f["status"] == "ok":
        out.append(
            ("faithful", f"memsim replay DIR/{cid}.json", "the shrunk counterexample on upstream's design")
        )
        if cells["fixed"]["declared"]:
            out.append(("fixed", f"memsim replay DIR/{cid}.json --variant fixed", "the same example, fixed"))
        if cells["combined"]["declared"]:
            out.append(("combined", f"memsim replay DIR/{cid}.json --variant combined", "with every fix on"))
    if o["declared"] and o["status"] == "ok":
        out.append(("off", f"memsim replay DIR/{cid}.off.json", "the off switch's counterexample"))
    return out


def _switches(row: dict[str, Any], key: str) -> list[str]:
    """A row's switch names (``fixes``/``off``): the ledger's ``off`` key holds the off *direction* once
    serialised, so the names come from the claim registry when the row does not carry them."""
    value = row.get(f"{key}_switches", row.get(key))
    if isinstance(value, list):
        return [str(x) for x in value]
    from sim.errors import UsageError

    try:
        return list(getattr(cl.get(str(row["claim"])), key, ()))
    except UsageError:  # an uninstalled design or an unknown claim: the page says "—"
        return []


def _coverage(systems: list[str]) -> list[dict[str, Any]]:
    """The fidelity coverage of each design in the ledger (``memsim doc coverage``)."""
    from sim.errors import UsageError
    from sim.fidelity import coverage, fidelity_module
    from sim.registry import design

    out = []
    for s in systems:
        try:
            d = design(s)
            entries: list[tuple[str, str, str, list[str]]] = []
            for rid, cov in coverage(s):
                if cov is None or not cov.covered:
                    entries.append((rid, "uncovered", "UNCOVERED", []))
                elif cov.not_modeled:
                    entries.append((rid, "not-modeled", f"Not modeled: {cov.not_modeled}", []))
                else:
                    entries.append((rid, "covered", ", ".join(cov.elements), list(cov.tests)))
            not_modeled = [str(x) for x in getattr(fidelity_module(s), "NOT_MODELED", [])]
            out.append(
                {"system": s, "title": d.title, "report": d.report.title, "path": d.report.path,
                 "entries": entries, "not_modeled": not_modeled, "installed": True}
            )  # fmt: skip
        except UsageError:
            out.append({"system": s, "title": s, "report": "", "path": "", "entries": [], "not_modeled": [],
                        "installed": False})  # fmt: skip
    return out


def context(doc: dict[str, Any]) -> dict[str, Any]:
    """The template context of a ledger document."""
    rows_in = [r for r in doc.get("claims", []) if isinstance(r, dict) and "claim" in r]
    systems = list(dict.fromkeys(str(r.get("system", "")) for r in rows_in))
    cover = _coverage(systems)
    anchors = {(c["system"], rid) for c in cover for rid, *_ in c["entries"]}
    from sim.report.findings import headline

    rows = []
    for r in rows_in:
        cells = {
            name: _verdict(name, r.get(name) if isinstance(r.get(name), dict) else None)
            for name in DIRECTIONS
        }
        system = str(r.get("system", ""))
        records = [(str(rid), (system, str(rid)) in anchors) for rid in r.get("records") or []]
        declared = [c for c in cells.values() if c["declared"]]
        rows.append({
            "claim": str(r["claim"]), "system": system, "records": records,
            "statement": str(r.get("statement", "")), "fix": str(r.get("fix", "")),
            "mode": headline(str(r.get("statement", ""))),
            "fixes": _switches(r, "fixes"), "off": _switches(r, "off"),
            "counterfactual": bool(r.get("counterfactual")), "intent": str(r.get("intent") or ""),
            "seconds": r.get("seconds"), "cells": cells, "replays": _replays(r, cells),
            "as_expected": bool(declared) and all(c["status"] == "ok" for c in declared),
        })  # fmt: skip
    upstream = [r for r in rows if not r["counterfactual"]]
    counter = [r for r in rows if r["counterfactual"]]

    def count(rs: list[dict[str, Any]], name: str) -> tuple[int, int]:
        decl = [r for r in rs if r["cells"][name]["declared"]]
        return sum(r["cells"][name]["status"] == "ok" for r in decl), len(decl)

    stats = []
    found, n_up = count(upstream, "faithful")
    stats.append(
        (
            f"{found}/{n_up}",
            "counterexamples on upstream's designs",
            "" if not n_up else "ok" if found == n_up else "bad",
        )
    )
    if counter:
        cf, n_cf = count(counter, "faithful")
        stats.append((f"{cf}/{n_cf}", "on counterfactual designs", "ok" if cf == n_cf else "bad"))
    for name, label in (("fixed", "fixed variants held"), ("off", "off switches rejected"),
                        ("combined", "held with all fixes on")):  # fmt: skip
        ok, n = count(rows, name)
        stats.append((f"{ok}/{n}", label, "" if not n else "ok" if ok == n else "bad"))
    wrong = [r for r in rows if not r["as_expected"]]
    stats.append((str(len(wrong)), "claims not as expected", "bad" if wrong else "ok"))
    by_system = [(s, [r for r in rows if r["system"] == s]) for s in systems]
    return {
        "doc": doc,
        "version": str(doc.get("memsim_version", "")),
        "profile": str(doc.get("profile", "")),
        "exhaustive": str(doc.get("exhaustive") or ""),
        "seed": doc.get("seed", ""),
        "rows": rows,
        "by_system": by_system,
        "stats": stats,
        "wrong": wrong,
        "coverage": cover,
        "directions": DIRECTIONS,
        "expectation": EXPECTATION,
        "must_hold": MUST_HOLD,
    }


def render_claims(doc: dict[str, Any]) -> str:
    """The report page of a claims ledger document (``memsim claims --json``)."""
    check_ledger(doc)  # the schema its writer produces (sim.report.inputs)
    return render("claims.html.j2", **context(doc))
