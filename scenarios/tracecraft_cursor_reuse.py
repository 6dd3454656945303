"""Mirror cursor reuse: one session id, two projects, one local state file (Tracecraft).

Covers: MEM-OBJ-mirror-state, RT-RTE-session-mirror, MEM-OBJ-session-parts, MEM-OBJ-session-meta;
claims tracecraft.mirror-cursor-reuse and tracecraft.stop-deletes-cursor.

Scenario: a claude-code session grows by LINES_PER_FLUSH JSONL lines between flushes; the host mirrors
it FLUSHES times into project A. The same session is then mirrored into project B with another config:
the local state is keyed by session id only, so B resumes at A's byte offset and never receives the
first bytes. Then ``session stop`` in A deletes that state; the next mirror into A re-uploads the whole
file, so ``show`` prints it twice. Each line carries a fact token; each time an agent resumes the
session from the bucket (``session show --tail``), its harness hands the model the agent prompt and the
lines it got, and every fact of the source is needed. The run is repeated with the ``state-scoped`` and
``stop-keeps-cursor`` fixes. Same output on the in-memory store and on S3 through moto.
"""

from __future__ import annotations

from pydantic import Field

from sim import scenario as sc
from sim.files import MemoryTree
from sim.scenario import Context, main
from sim.text import extract_facts, fact_token
from sim.variant import FAITHFUL, Variant
from systems.tracecraft.adapter import SYSTEM_PROMPT
from systems.tracecraft.design import DESIGN
from systems.tracecraft.model import FileTailHarness, Tracecraft

SYSTEM = "tracecraft"
SEED = 4
STORES = ("memory", "moto")


class Params(sc.Params):
    """The host's flushes."""

    flushes: int = Field(3, ge=1, le=50, description="flushes into project A before project B mirrors")
    lines_per_flush: int = Field(4, ge=1, le=100, description="JSONL lines the host appends per flush")
    interval_s: float = Field(
        5.0, gt=0, le=3600, description="simulated seconds between flushes (--interval)"
    )


VALUES = ("amber", "basalt", "cedar", "dune")


def _lines(start: int, n: int) -> bytes:
    return b"".join(
        b'{"turn":%d,"role":"assistant","text":"step %d %s"}\n'
        % (i, i, fact_token(i + 1, VALUES[i % len(VALUES)]).encode())
        for i in range(start, start + n)
    )


def _resume(ctx: Context, agent: str, lines: list[str], source: bytes, label: str) -> str:
    """The request an agent's harness makes after resuming the session from the bucket."""
    needed = extract_facts(source.decode())
    kinds = ["system", *(["message"] * len(lines))]
    rec = ctx.sim.request(
        SYSTEM,
        "tracecraft.resume",
        [SYSTEM_PROMPT, *lines],
        agent=agent,
        needed=needed,
        kinds=kinds,
        variant=label,
    )
    return f"{len(needed & rec.fact_ids)} of {len(needed)} facts reach the model"


def _run(ctx: Context, variant: Variant, label: str) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    store = ctx.open_store()
    try:
        home = MemoryTree(mtime=sim.clock("host").seconds)
        h = FileTailHarness("claude-code", home)
        tcs = {name: Tracecraft(sim, store, project=name, variant=variant) for name in ("projA", "projB")}
        a, b = tcs["projA"].agent("host", home=home), tcs["projB"].agent("host", home=home)
        path = h.session_path("sess-1")
        n = 0
        for _ in range(p.flushes):
            home.append_bytes(path, _lines(n, p.lines_per_flush))
            n += p.lines_per_flush
            a.call(a.mirror(h))
            sim.run(until=sim.now + p.interval_s)
        home.append_bytes(path, _lines(n, p.lines_per_flush))
        n += p.lines_per_flush
        b.call(b.mirror(h))
        size = home.size(path)
        meta_b, lines_b = b.call(b.session_show("sess-1", tail=10_000))
        reach_b = _resume(ctx, "projB", lines_b, home.read_bytes(path), label)
        out = [
            f"[{label}] source: {n} lines, {size} B",
            f"[{label}] projB after its first mirror: {len(lines_b)} of {n} lines, first part starts at byte "
            f"{meta_b['parts'][0]['cursor_range'][0]}; resuming from it, {reach_b}",
        ]
        a.call(a.session_stop("sess-1"))
        home.append_bytes(path, _lines(n, 1))
        n += 1
        a.call(a.mirror(h))
        meta_a, lines_a = a.call(a.session_show("sess-1", tail=10_000))
        reach_a = _resume(ctx, "projA", lines_a, home.read_bytes(path), label)
        dup = len(lines_a) - len(set(lines_a))
        out.append(
            f"[{label}] projA after stop + mirror: show prints {len(lines_a)} lines for {n} source lines "
            f"({dup} duplicates); total_source_bytes={meta_a['total_source_bytes']} vs file "
            f"{home.size(path)} B; ended_at set: {meta_a['ended_at'] is not None}"
        )
        out.append(
            f"[{label}] projA resumed after stop + mirror: {reach_a} ({dup} duplicated lines sent too)"
        )
        return out
    finally:
        store.close()


def run(ctx: Context) -> list[str]:
    """Run the faithful design, then the two fixes, and summarize."""
    out = _run(ctx, FAITHFUL, "faithful")
    out += _run(ctx, DESIGN.switches.fixed("state-scoped", "stop-keeps-cursor"), "fixed")
    return out


if __name__ == "__main__":
    main(__name__)
