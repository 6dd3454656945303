"""The Hermes ``state.db`` reader (``env/web/routes_agent.py``; MEM-RTE-trace-inspection)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

_STEP_RE = re.compile(r"^Day\s+(\d+),\s*Hour\s+(\d+)\b")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def read_hermes_trace(db_path: str | Path, run_id: str, include_compacted: Any = None) -> dict[str, Any]:
    """Read a Hermes ``state.db`` read-only (MEM-RTE-trace-inspection) (``?mode=ro``): the session lineage
    from ``merchantbench-{rid}`` (else ``realshop-{rid}``, else every merchantbench/realshop session by
    ``started_at``), messages with ``active = 1`` unless *include_compacted* is truthy, grouped by the
    ``Day D, Hour H`` user message into steps ``(D-1)*24+H``; the first system prompt is prepended to the
    lowest step. Any ``sqlite3.Error`` gives an empty result."""
    empty: dict[str, Any] = {"steps": {}, "stats": {"total_raw": 0, "total_active": 0, "total_compacted": 0}}
    try:
        conn = sqlite3.connect(f"file:{Path(db_path).as_posix()}?mode=ro", uri=True)
    except sqlite3.Error:
        return empty
    try:
        sessions: list[str] = []
        for root in (f"merchantbench-{run_id}", f"realshop-{run_id}"):
            rows = conn.execute(
                "WITH RECURSIVE lineage(id) AS (SELECT id FROM sessions WHERE id = ? UNION "
                "SELECT s.id FROM sessions s JOIN lineage l ON s.parent_session_id = l.id) "
                "SELECT s.id FROM sessions s JOIN lineage l ON s.id = l.id ORDER BY s.started_at, s.id",
                (root,),
            ).fetchall()
            if rows:
                sessions = [r[0] for r in rows]
                break
        if not sessions:
            sessions = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE source IN ('merchantbench','realshop') ORDER BY started_at"
                )
            ]
        if not sessions:
            return empty
        marks = ",".join("?" * len(sessions))
        stats_row = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(active = 1), 0), COALESCE(SUM(active != 1), 0) FROM messages "
            f"WHERE session_id IN ({marks})",
            sessions,
        ).fetchone()
        active = "" if _truthy(include_compacted) else " AND active = 1"
        rows = conn.execute(
            f"SELECT role, content FROM messages WHERE session_id IN ({marks}){active} "
            "ORDER BY timestamp, id",
            sessions,
        ).fetchall()
        prompt = next(
            (
                p
                for (p,) in conn.execute(
                    f"SELECT system_prompt FROM sessions WHERE id IN ({marks}) ORDER BY started_at, id",
                    sessions,
                )
                if p
            ),
            None,
        )
    except sqlite3.Error:
        return empty
    finally:
        conn.close()
    steps: dict[int, list[dict[str, Any]]] = {}
    current: int | None = None
    for role, content in rows:
        text = content or ""
        m = _STEP_RE.match(text.lstrip()) if role == "user" else None
        if m:
            current = (int(m[1]) - 1) * 24 + int(m[2])
            steps.setdefault(current, [])
        if current is None:
            continue
        steps[current].append({"role": role, "content": text})
    if prompt and steps:
        lowest = min(steps)
        steps[lowest].insert(0, {"role": "system", "content": prompt})
    return {
        "steps": steps,
        "stats": {"total_raw": stats_row[0], "total_active": stats_row[1], "total_compacted": stats_row[2]},
    }
