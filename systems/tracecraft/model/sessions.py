"""Reading mirrored sessions: ``session list/show/stop/compact`` (MEM-OBJ-session-meta,
RT-RTE-session-compact)."""

from __future__ import annotations

from typing import Any

from systems.tracecraft import faults as fp
from systems.tracecraft.model.bucket import loads
from systems.tracecraft.model.core import Gen
from systems.tracecraft.model.mirror import MirrorService
from systems.tracecraft.model.retention import join
from systems.tracecraft.model.tail import tail_lines_of_parts
from systems.tracecraft.protocol import TracecraftError, part_name


class SessionsService(MirrorService):
    """Sessions commands of a :class:`~systems.tracecraft.model.Client`."""

    def _matching_metas(self, session_id: str, harness: str | None = None) -> Gen:
        """Every ``…/<sid>/meta.json`` key in sort order (one listing); the first one is what show, stop
        and compact use. The require-harness fix refuses an ambiguous session id."""
        yield from self._rt()
        metas = [k for k in self.b.list_keys("sessions/") if k.endswith(f"/{session_id}/meta.json")]
        if harness is not None:
            metas = [k for k in metas if k.split("/")[1] == harness]
        if self.variant.has("require-harness") and len(metas) > 1:
            raise TracecraftError(f"Session {session_id} exists under several harnesses; pass --harness")
        return metas

    def _find_meta(self, session_id: str, harness: str | None = None) -> Gen:
        metas = yield from self._matching_metas(session_id, harness)
        if not metas:
            raise TracecraftError(f"session not found: {session_id}")
        return metas[0]

    def session_list(self, harness: str | None = None, limit: int = 20, sort_by: str = "recent") -> Gen:
        """(RT-RTE-session-mirror) ``session list`` (``cli/session.py:377-421``): every non-empty meta (of
        one ``harness`` field), newest ``last_uploaded_at`` first (``sort_by="size"``: largest
        ``total_uploaded_bytes``), then the first *limit*; prints the table or ``(no sessions)``."""
        yield from self._command()
        yield from self._rt()
        keys = [k for k in self.b.list_keys("sessions/") if k.endswith("/meta.json")]
        rows = []
        for k in keys:
            yield from self._rt()
            meta = self.b.get_json(k)
            if not meta or (harness and meta.get("harness") != harness):
                continue
            rows.append(meta)
        if sort_by == "recent":
            rows.sort(key=lambda m: m.get("last_uploaded_at", ""), reverse=True)
        else:
            rows.sort(key=lambda m: m.get("total_uploaded_bytes", 0), reverse=True)
        rows = rows[:limit]
        if not rows:
            self._print("(no sessions)")
        else:
            self._print(f"{'HARNESS':<14} {'SESSION':<16} {'BYTES':>12} {'PARTS':>6} {'LAST UPLOAD':<25}")
            self._print("-" * 80)
            for m in rows:
                sid = m.get("session_id", "?")
                short = sid[:8] + ("…" if len(sid) > 8 else "")
                self._print(
                    f"{m.get('harness', '?'):<14} {short:<16} {m.get('total_uploaded_bytes', 0):>12,} "
                    f"{len(m.get('parts', [])):>6} {m.get('last_uploaded_at', '-')[:24]:<25}"
                )
        self._op("session_list", harness=harness, count=len(rows))
        return rows

    def session_show(self, session_id: str, tail: int = 0, harness: str | None = None) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-session-parts) The first matching meta and the last *tail* lines.

        Downloads every listed part (the listing is the manifest; the compact-manifest fix uses meta),
        concatenates, ``splitlines()`` and decodes with replacement. Returns ``(meta, lines)``.
        """
        yield from self._command()
        if self.variant.has("show-refuses"):
            raise TracecraftError(f"session not found: {session_id}")
        meta_key = yield from self._find_meta(session_id, harness)
        yield from self._rt()
        doc, text = self.b.get_json_text(meta_key)
        self._print(text)
        meta = doc or {}
        lines: list[str] = []
        if tail > 0:
            chunks = yield from self._transcript_parts(meta_key[: -len("meta.json")], meta)
            lines = [ln.decode("utf-8", errors="replace") for ln in tail_lines_of_parts(chunks, tail)]
            self._print("\n--- tail ---")
            for ln in lines:
                self._print(ln)
        self._op("session_show", session=session_id, tail=tail, lines=len(lines))
        return meta, lines

    def _transcript(self, prefix: str, meta: dict[str, Any]) -> Gen:
        chunks = yield from self._transcript_parts(prefix, meta)
        return join(chunks)

    def _transcript_parts(self, prefix: str, meta: dict[str, Any]) -> Gen:
        """The bodies of every listed part, in order: one GET per part (as upstream), not yet joined."""
        yield from self._rt()
        parts = self._listed_parts(prefix, search=True)
        if self.variant.has("compact-manifest") and meta.get("parts") is not None:
            manifest = {(p.get("seq"), p.get("uuid")) for p in meta["parts"]}
            parts = [p for p in parts if (p[0], p[1]) in manifest]
        chunks = []
        for _, _, k in parts:
            yield from self._rt()
            chunks.append(self.b.get_bytes(k) or b"")
        return chunks

    def transcript(self, harness: str, session_id: str) -> Gen:
        """The bytes ``show`` would concatenate for this session (all listed parts)."""
        prefix = f"sessions/{harness}/{session_id}/"
        yield from self._rt()
        meta = self.b.get_json(prefix + "meta.json") or {}
        return (yield from self._transcript(prefix, meta))

    def session_stop(self, session_id: str, harness: str | None = None) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-mirror-state) Delete the local state, then set ``ended_at``.

        Best effort, as upstream: a session with no meta is not an error; a non-empty meta of the first
        matching key gets ``ended_at`` if unset. Prints ``stopped session=… state_cleared=…
        meta_marked_ended=…`` and returns the meta key (None without one). Does not stop a running
        follower (the stop-keeps-cursor fix marks the state ended instead).
        """
        yield from self._command()
        hname = harness or "claude-code"
        spath = self.state_path(hname, session_id)
        had_state = self.home.exists(spath)
        if self.variant.has("stop-keeps-cursor"):
            st = self._load_state(spath)
            st["ended"] = True
            self._save_state(spath, st)
        elif had_state:
            self.home.delete(spath)
        metas = yield from self._matching_metas(session_id, harness)
        marked = False
        if metas:
            yield from self._rt()
            meta = self.b.get_json(metas[0]) or {}
            if meta and not meta.get("ended_at"):
                meta["ended_at"] = self.clock.iso()
                yield from self._rt()
                self.b.put_json(metas[0], meta)
                marked = True
        self._print(f"stopped session={session_id}  state_cleared={had_state}  meta_marked_ended={marked}")
        self._op("session_stop", session=session_id)
        return metas[0] if metas else None

    def session_compact(self, session_id: str, keep_tail: int = 0, harness: str | None = None) -> Gen:
        """(RT-RTE-session-compact) Merge all but the last K parts: PUT merged, PUT meta, DELETE targets.

        Targets are all but the last K parts (none when K >= the part count, as upstream's ``[:-K]``).
        Raises :class:`TracecraftError` for K < 0. Fewer than 2 targets prints "nothing to compact: …".
        Crash points ``tracecraft.compact.after_merged``, ``after_meta`` and ``after_delete``.
        """
        if keep_tail < 0:
            raise TracecraftError("--keep-tail must be >= 0")
        yield from self._command()
        meta_key = yield from self._find_meta(session_id, harness)
        prefix = meta_key[: -len("meta.json")]
        yield from self._rt()
        parts = self._listed_parts(prefix, search=True)
        if self.variant.has("compact-manifest"):
            yield from self._rt()
            m0 = self.b.get_json(meta_key) or {}
            manifest = {(p.get("seq"), p.get("uuid")) for p in m0.get("parts") or []}
            covered = {u for p in m0.get("parts") or [] for u in p.get("covers", [])}
            for seq, u, k in parts:  # originals a finished compact covered: delete idempotently
                if u in covered and (seq, u) not in manifest:
                    yield from self._rt()
                    self.b.delete(k)
            parts = [p for p in parts if (p[0], p[1]) in manifest]
        # As upstream's ``part_keys[:-K], part_keys[-K:]``: K >= the part count leaves no targets.
        targets = parts[: max(0, len(parts) - keep_tail)]
        kept = parts[len(targets) :]
        if len(targets) < 2 or self.variant.has("compact-merges-nothing"):
            self._print(f"nothing to compact: {len(targets)} mergeable part(s) (kept newest {len(kept)})")
            return None
        chunks = []
        for _, _, k in targets:
            yield from self._rt()
            chunks.append(self.b.get_bytes(k) or b"")
        body = self.b.concat(chunks)
        uniq = self._hex()
        merged_key = prefix + part_name(0, uniq)
        yield from self._rt()
        self.b.put_bytes(merged_key, body)
        self.sim.faults.point(fp.COMPACT_AFTER_MERGED)
        while True:
            yield from self._rt()
            raw = self.b.get_bytes(meta_key)
            meta = loads(raw) or {}
            merged = {
                "seq": 0,
                "uuid": uniq,
                "compacted_from": len(targets),
                "uploaded_bytes": len(body),
                "uploaded_at": self.clock.iso(),
            }
            if self.variant.has("compact-manifest") or self.variant.has("meta-cas"):
                merged["covers"] = [u for _, u, _ in targets]
            target_ids = {(s, u) for s, u, _ in targets}
            kept_seqs = {s for s, _, _ in kept}
            old = meta.get("parts") or []
            if self.variant.has("meta-cas"):
                surviving = [p for p in old if (p.get("seq"), p.get("uuid")) not in target_ids]
            else:
                surviving = [p for p in old if p.get("seq") in kept_seqs]
            meta["parts"] = [merged, *sorted(surviving, key=lambda p: p.get("seq", 0))]
            meta["last_compacted_at"] = self.clock.iso()
            yield from self._rt()
            if not self.variant.has("meta-cas"):
                self.b.put_json(meta_key, meta)
                break
            if self.b.compare_and_put_json(meta_key, meta, raw):
                break
        self.sim.faults.point(fp.COMPACT_AFTER_META)
        for i, (_, _, k) in enumerate(targets):
            yield from self._rt()
            self.b.delete(k)
            if i < len(targets) - 1:
                self.sim.faults.point(fp.COMPACT_AFTER_DELETE)
        self._print(
            f"compacted session={session_id}  merged {len(targets)} parts -> 1 ({len(body):,}B)  "
            f"deleted={len(targets)}  kept_tail={len(kept)}"
        )
        yield from self._protection_summary()
        self._op("session_compact", session=session_id, targets=len(targets), merged=merged_key)
        return merged_key
