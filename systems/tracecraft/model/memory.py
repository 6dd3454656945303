"""Shared memory: ``memory set/get/history/list`` (MEM-OBJ-memory-live, MEM-OBJ-memory-history)."""

from __future__ import annotations

import json

from systems.tracecraft import faults as fp
from systems.tracecraft.model.core import ClientCore, Gen, validate_memory_key
from systems.tracecraft.protocol import TracecraftError, append_key, direct_children, stamp_above


class MemoryService(ClientCore):
    """Memory commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- memory (RT-RTE-memory-write, MEM-OBJ-memory-live, MEM-OBJ-memory-history) ---------------------
    def memory_set(self, key: str, value: str) -> Gen:
        """(RT-RTE-memory-write, MEM-OBJ-memory-history, MEM-OBJ-memory-live) Snapshot PUT, then live PUT.

        Raises :class:`TracecraftError` for a blank key, a ``/``, or ``_history``/``_history.*``.
        Crash point ``tracecraft.memory_set.after_snapshot`` between the two unconditional PUTs.
        """
        validate_memory_key(key)
        yield from self._command()
        path = key.replace(".", "/")
        now = self.clock.iso()
        prefix = f"memory/_history/{path}/"
        # The key is stamped before the PUT's round trip, as upstream's ``append_key`` (``memory.py:64``).
        ts = self.clock.ns()
        if self.variant.has("history-is-live"):  # stamp above the newest snapshot (LIST), so key order is
            yield from self._rt()  # the order of sets that do not overlap, whatever the clocks
            own = self.clock.ns()
            ts = stamp_above(own, self.b.list_keys(prefix, f"{prefix}{own}"), prefix)
        hist = append_key(prefix, self.agent_id, ts, self._hex())
        if self.variant.has("memory-writes-nothing"):
            self._print(f"Set {key} = {value}")
            return hist
        yield from self._rt()
        self.b.put_json(hist, {"key": key, "value": value, "set_by": self.agent_id, "set_at": now})
        self.sim.faults.point(fp.MEMORY_SET_AFTER_SNAPSHOT)
        yield from self._rt()
        self.b.put_json(f"memory/{path}.json", {"value": value, "set_by": self.agent_id, "set_at": now})
        self._print(f"Set {key} = {value}")
        self._op("memory_set", key=key, value=value, snapshot=hist)
        return hist

    def memory_get(self, key: str, with_meta: bool = False) -> Gen:
        """(MEM-OBJ-memory-live) The live value (or ``{key, value, set_by, set_at}``); exit 1 when missing.

        The history-is-live fix returns the newest snapshot instead.
        """
        yield from self._command()
        path = key.replace(".", "/")
        yield from self._rt()
        if self.variant.has("history-is-live"):
            prefix = f"memory/_history/{path}/"
            hist = sorted(direct_children(self.b.list_keys(prefix), prefix))
            doc = None
            if hist:
                yield from self._rt()
                doc = self.b.get_shared(hist[-1])
        else:
            doc = self.b.get_shared(f"memory/{path}.json")
        if doc is None:
            self._eprint("")
            self._op("memory_get", phase="fail", key=key)
            raise TracecraftError("")
        self._op("memory_get", key=key, value=doc.get("value"))
        if with_meta:
            out = {
                "key": key,
                "value": doc.get("value"),
                "set_by": doc.get("set_by"),
                "set_at": doc.get("set_at"),
            }
            self._print(json.dumps(out, indent=2))
            return out
        self._print(str(doc.get("value")))
        return doc.get("value")

    def memory_history(self, key: str, limit: int = 20) -> Gen:
        """(MEM-OBJ-memory-history) Direct-child snapshots, newest *limit* (<=0: all), printed oldest first.

        Raises :class:`TracecraftError` ("No history for K.") when none is left; GETs returning None are
        skipped. Returns the printed ``[<set_at>] <set_by>: <value>`` lines.
        """
        yield from self._command()
        prefix = f"memory/_history/{key.replace('.', '/')}/"
        yield from self._rt()
        keys = sorted(direct_children(self.b.list_keys(prefix), prefix))
        if limit > 0:
            keys = keys[-limit:]
        if not keys:
            self._eprint(f"No history for {key}.")
            self._op("memory_history", phase="fail", key=key)
            raise TracecraftError(f"No history for {key}.")
        lines = []
        for k in keys:
            yield from self._rt()
            doc = self.b.get_shared(k)
            if doc is None:
                continue
            line = f"[{doc.get('set_at', '?')}] {doc.get('set_by', '?')}: {doc.get('value')}"
            self._print(line)
            lines.append(line)
        self._op("memory_history", key=key, entries=len(lines))
        return lines

    def memory_list(self, prefix: str = "") -> Gen:
        """(MEM-OBJ-memory-live) Dotted keys under ``memory/`` + prefix (not boundary-aware), every listed
        object but ``memory/_history/`` (``.json`` stripped when present)."""
        yield from self._command()
        yield from self._rt()
        out = []
        for k in self.b.list_keys("memory/" + prefix.replace(".", "/")):
            if k.startswith("memory/_history/"):
                continue
            out.append(k.removeprefix("memory/").removesuffix(".json").replace("/", "."))
            self._print(out[-1])
        self._op("memory_list", prefix=prefix, count=len(out))
        return out
