"""The session mirror: ``session mirror`` and its local state (RT-RTE-session-mirror,
MEM-OBJ-mirror-state).
"""

from __future__ import annotations

import json
from typing import Any

from sim.files import FileMissing
from sim.objects import PreconditionFailed
from systems.tracecraft import faults as fp
from systems.tracecraft.model.bucket import dumps
from systems.tracecraft.model.core import ClientCore, Gen
from systems.tracecraft.model.harness import FileTailHarness, Harness
from systems.tracecraft.protocol import (
    PART_RE,
    PART_RE_WIDE,
    TracecraftError,
    merge_counts,
    part_name,
    redact,
)
from systems.tracecraft.state import Flush, Session


class MirrorService(ClientCore):
    """Mirror commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- session mirror (RT-RTE-session-mirror, MEM-OBJ-session-parts/-meta, MEM-OBJ-mirror-state) ---
    def state_path(self, harness: str, session_id: str) -> str:
        """``~/.tracecraft/mirror-state/<sid>.json`` (state-scoped: also backend/bucket/project/harness)."""
        if self.variant.has("state-scoped"):
            tc = self.tc
            scope = f"{tc.backend}/{tc.bucket_name}/{tc.project}/{harness}"
            return f".tracecraft/mirror-state/{scope}/{session_id}.json"
        return f".tracecraft/mirror-state/{session_id}.json"

    def _load_state(self, path: str) -> dict[str, Any]:
        try:
            doc = json.loads(self.home.read_bytes(path))
        except (FileMissing, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def _save_state(self, path: str, doc: dict[str, Any]) -> None:
        self.home.write_bytes(path, dumps(doc), clock=self.clock.seconds)

    def _mirror_state(self, spath: str, harness: str, source_path: str) -> dict[str, Any]:
        """The local mirror state (only ``cursor`` is read back); the state-scoped fix drops a state whose
        harness or source does not match."""
        state = self._load_state(spath)
        scoped = self.variant.has("state-scoped") and state
        if scoped and (state.get("harness") != harness or state.get("source_path") != source_path):
            return {}
        return state

    def _part_re(self) -> Any:
        return PART_RE_WIDE if self.variant.has("part-seq-wide") else PART_RE

    def _listed_parts(self, prefix: str, *, search: bool = False) -> list[tuple[int, str, str]]:
        """(seq, uuid, key) of every listed part, in key order: PART_RE ``match``ed on the last path
        segment (next-seq), or ``search``ed on it (show and compact). As upstream, the listing is
        recursive, so a part-named object nested below the session prefix counts too."""
        rx = self._part_re()
        out = []
        for k in self.b.list_keys(prefix):
            name = k.rsplit("/", 1)[-1]
            m = rx.search(name) if search else rx.match(name)
            if m:
                out.append((int(m.group(1)), name[-len("12345678.jsonl") : -len(".jsonl")], k))
        if self.variant.has("part-seq-wide"):
            out.sort(key=lambda t: (t[0], t[2]))
        return out

    def mirror(
        self, harness: Harness, session_id: str | None = None, *, no_redact: bool = False, min_bytes: int = 1
    ) -> Gen:
        """(RT-RTE-session-mirror) One-shot ``session mirror``: :meth:`_mirror_once`, then the protection
        summary on stdout (``cli/session.py:196-201``). Returns the :class:`Flush`."""
        yield from self._command()
        flush = yield from self._mirror_once(harness, session_id, no_redact=no_redact, min_bytes=min_bytes)
        yield from self._protection_summary()
        return flush

    def session_totals(self) -> Gen:
        """``{count, total_uploaded_bytes, last_uploaded_at}`` of non-empty metas (``protocol.py:237``)."""
        yield from self._rt()
        metas = []
        for k in [k for k in self.b.list_keys("sessions/") if k.endswith("/meta.json")]:
            yield from self._rt()
            m = self.b.get_shared(k)
            if m:
                metas.append(m)
        return {
            "count": len(metas),
            "total_uploaded_bytes": sum(m.get("total_uploaded_bytes", 0) for m in metas),
            "last_uploaded_at": max(
                (m["last_uploaded_at"] for m in metas if m.get("last_uploaded_at")), default=None
            ),
        }

    def _protection_summary(self) -> Gen:
        """``✔ N session(s) protected · X.X MB in YOUR bucket · 0 lost`` on stdout, any error swallowed
        (``cli/session.py:90-100``)."""
        try:
            totals = yield from self.session_totals()
            mb = totals["total_uploaded_bytes"] / (1024 * 1024)
            self._print(f"✔ {totals['count']} session(s) protected · {mb:.1f} MB in YOUR bucket · 0 lost")
        except (TypeError, ValueError, KeyError):
            pass

    def _mirror_once(
        self,
        harness: Harness,
        session_id: str | None = None,
        *,
        no_redact: bool = False,
        min_bytes: int = 1,
        follower: bool = False,
    ) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-session-parts, -meta, MEM-OBJ-mirror-state) ``_mirror_once``
        (``cli/session.py:273-371``).

        Load the state (only ``cursor`` is read back); if fewer than *min_bytes* are new print "nothing
        new"; read the tail; redact per chunk; seq = max listed + 1; PUT the part; GET/PUT a rebuilt meta;
        save the state. Crash points ``tracecraft.mirror.after_part`` and ``tracecraft.mirror.after_meta``.
        """
        sess = harness.find(session_id)
        source_path = sess.source_path or sess.path
        spath = self.state_path(harness.name, sess.session_id)
        state = self._mirror_state(spath, harness.name, source_path)
        if self.variant.has("stop-keeps-cursor") and state.get("ended") and follower:
            self._op("mirror", session=sess.session_id, result="stopped")
            return Flush("stopped")
        cursor = int(state.get("cursor", 0) or 0)
        prefix = f"sessions/{harness.name}/{sess.session_id}/"
        meta_key = prefix + "meta.json"
        if self.variant.has("mirror-intent") and state.get("pending"):
            resumed = yield from self._resume_intent(spath, state, prefix, meta_key)
            if resumed:
                state = self._load_state(spath)
                cursor = int(state.get("cursor", 0) or 0)
        size = harness.size(sess)
        if size - cursor < min_bytes or self.variant.has("mirror-uploads-nothing"):
            self._print(f"nothing new: session={sess.session_id} cursor={cursor:,} size={size:,}")
            self._op("mirror", session=sess.session_id, result="nothing new")
            return Flush("nothing new")
        chunk, nxt = harness.read_new(sess, cursor)
        if self.variant.has("line-aligned") and isinstance(harness, FileTailHarness):
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                self._print(f"nothing new: session={sess.session_id} cursor={cursor:,} size={size:,}")
                return Flush("nothing new")
            chunk, nxt = chunk[:cut], cursor + cut
        body, counts = (chunk, {}) if no_redact else redact(chunk)
        yield from self._rt()
        parts = self._listed_parts(prefix)
        seq = max((p[0] for p in parts), default=-1) + 1
        uniq = self._hex()
        key = prefix + part_name(seq, uniq)
        lock = f"{prefix}_flush/{cursor:012d}.lock"
        if self.variant.has("part-cond-put"):
            # The note's conditional PUT on the seq-only name is not enough: a second mirror that lists after
            # the first one's part PUT takes seq+1 and uploads the same bytes. The lock is named by the start
            # cursor; under it the state is read again (a mirror that finished meanwhile moved the cursor),
            # and it is removed after the state save, so a later flush from the same cursor (after the state
            # was lost) is not refused forever.
            yield from self._rt()
            try:
                self.b.put_bytes(lock, b"", if_none_match=True)
            except PreconditionFailed:
                self._op("mirror", phase="fail", session=sess.session_id, seq=seq, result="conflict")
                return Flush("conflict", seq)
            again = self._mirror_state(spath, harness.name, source_path)
            if int(again.get("cursor", 0) or 0) != cursor:
                yield from self._rt()
                self.b.delete(lock)
                self._op("mirror", phase="fail", session=sess.session_id, seq=seq, result="conflict")
                return Flush("conflict", seq)
        if self.variant.has("mirror-intent"):
            state = dict(  # the intent carries the state's scope, so the retry's scope check keeps it
                state,
                harness=harness.name,
                session_id=sess.session_id,
                source_path=source_path,
                pending={
                    "seq": seq,
                    "uuid": uniq,
                    "key": key,
                    "range": [cursor, nxt],
                    "source_bytes": len(chunk),
                    "uploaded_bytes": len(body),
                    "redactions": counts,
                },
            )
            self._save_state(spath, state)
        yield from self._rt()
        self.b.put_bytes(key, body)
        self.sim.faults.point(fp.MIRROR_AFTER_PART)
        entry = {  # uploaded_at is stamped after the meta GET, as upstream (``cli/session.py:321-332``)
            "seq": seq,
            "uuid": uniq,
            "cursor_range": [cursor, nxt],
            "source_bytes": len(chunk),
            "uploaded_bytes": len(body),
            "redactions": counts,
            "uploaded_at": "",
        }
        yield from self._meta_append(meta_key, harness, sess, entry)
        self.sim.faults.point(fp.MIRROR_AFTER_META)
        new_state = {
            "harness": harness.name,
            "session_id": sess.session_id,
            "source_path": source_path,
            "cursor": nxt,
            "last_uploaded_seq": seq,
            "last_flush_at": self.clock.iso(),
        }
        self._save_state(spath, new_state)
        if self.variant.has("part-cond-put"):
            yield from self._rt()
            self.b.delete(lock)
        self._print(
            f"uploaded part-{seq:05d}-{uniq}  source={len(chunk):,}B  upload={len(body):,}B  "
            f"redactions={counts or 'none'}"
        )
        self._op("mirror", session=sess.session_id, seq=seq, key=key, range=[cursor, nxt], redactions=counts)
        return Flush("uploaded", seq, key, (cursor, nxt), len(chunk), len(body), counts)

    def _resume_intent(self, spath: str, state: dict[str, Any], prefix: str, meta_key: str) -> Gen:
        """mirror-intent fix: the pending part landed? then make sure meta has it and commit the cursor."""
        pend = state["pending"]
        yield from self._rt()
        if not self.b.exists(pend["key"]):
            state.pop("pending")
            self._save_state(spath, state)
            if self.variant.has("part-cond-put"):
                yield from self._rt()
                self.b.delete(f"{prefix}_flush/{pend['range'][0]:012d}.lock")
            return False
        yield from self._rt()
        meta = self.b.get_json(meta_key) or {}
        if not any(p.get("uuid") == pend["uuid"] for p in meta.get("parts", [])):
            entry = {
                "seq": pend["seq"],
                "uuid": pend["uuid"],
                "cursor_range": pend["range"],
                "source_bytes": pend["source_bytes"],
                "uploaded_bytes": pend["uploaded_bytes"],
                "redactions": pend["redactions"],
                "uploaded_at": "",
            }
            harness_name = prefix.split("/")[1]
            src = str(state.get("source_path", ""))
            sess = Session(harness_name, prefix.split("/")[2], src, source_path=src)
            yield from self._meta_append(meta_key, None, sess, entry)
        state = {k: v for k, v in state.items() if k != "pending"}
        state["cursor"] = pend["range"][1]
        self._save_state(spath, state)
        if self.variant.has("part-cond-put"):  # the crashed flush still holds its lock
            yield from self._rt()
            self.b.delete(f"{prefix}_flush/{pend['range'][0]:012d}.lock")
        return True

    def _meta_append(
        self, meta_key: str, harness: Harness | None, sess: Session, entry: dict[str, Any]
    ) -> Gen:
        """GET meta, append the entry, PUT a rebuilt meta (the meta-cas fix: compare-and-put, keep keys)."""
        while True:
            yield from self._rt()
            raw = self.b.get_bytes(meta_key)
            meta = self.b.decode_shared(meta_key, raw) or {}  # read only: the rebuild copies what it keeps
            now = self.clock.iso()
            entry = dict(entry, uploaded_at=now)
            new: dict[str, Any] = {}
            if self.variant.has("meta-cas"):
                new.update(meta)
            new.update(
                {
                    "schema_version": 1,
                    "harness": harness.name if harness else sess.harness,
                    "session_id": sess.session_id,
                    "source_path": sess.source_path or sess.path,
                    "cwd": sess.cwd or None,  # null except for claude-code (``cli/session.py:339``)
                    "agent_id": self.agent_id,
                    "started_at": meta.get("started_at", now),
                    "last_uploaded_at": now,
                    "ended_at": meta.get("ended_at"),
                    "total_source_bytes": int(meta.get("total_source_bytes") or 0) + entry["source_bytes"],
                    "total_uploaded_bytes": int(meta.get("total_uploaded_bytes") or 0)
                    + entry["uploaded_bytes"],
                    "redaction_counts": merge_counts(meta.get("redaction_counts") or {}, entry["redactions"]),
                    "parts": [*list(meta.get("parts") or []), entry],
                }
            )
            covered = {u for p in meta.get("parts") or [] for u in p.get("covers", [])}
            if self.variant.has("meta-cas") and entry["uuid"] in covered:
                new["parts"] = list(meta.get("parts") or [])  # a racing compact already merged this part
            if not self.variant.has("meta-cas"):
                yield from self._rt()
                self.b.put_json(meta_key, new)
                return
            yield from self._rt()
            if self.b.compare_and_put_json(meta_key, new, raw):
                return

    def mirror_follow(
        self, harness: Harness, session_id: str | None = None, *, interval: float = 5, cycles: int = 1
    ) -> Gen:
        """(RT-RTE-session-mirror) ``--follow``: ``_mirror_once`` every *interval* s, reloading the state.

        Raises :class:`TracecraftError` for interval <= 0. Not modeled: Ctrl-C (runs *cycles* times).
        """
        if interval <= 0:
            raise TracecraftError("--interval must be > 0")
        yield from self._command()
        out = []
        for _ in range(cycles):
            out.append((yield from self._mirror_once(harness, session_id, follower=True)))
            if out[-1].status == "stopped":
                break
            yield self.sim.timeout(interval)
        return out
