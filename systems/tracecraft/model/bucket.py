"""The project view of the bucket (upstream ``s3.py``/``hf.py``): ``<project>/`` keys and JSON documents."""

from __future__ import annotations

import json
from typing import Any

from sim.objects import ObjectStore
from systems.tracecraft.protocol import TracecraftError


def dumps(doc: Any) -> bytes:
    """A JSON document's stored bytes: ``json.dumps(doc, indent=2)``, ASCII-escaped, no trailing newline,
    as upstream's S3 and HF ``put_json`` and the mirror-state file (``s3.py:47-51``, ``hf.py:52-63``,
    ``cli/session.py:64-66``)."""
    return json.dumps(doc, indent=2).encode("ascii")


def loads(body: bytes | None) -> Any:
    """A stored JSON document, None when missing or not JSON."""
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class Bucket:
    """The project view of the bucket (upstream ``s3.py``/``hf.py``): ``<project>/`` keys and JSON docs.

    ``backend="hf"`` models the HuggingFace backend's conditional put as exists-then-write with a store
    round trip between them (racy). The ``history-worm`` fix refuses overwrite/delete of snapshots.
    Not modeled: HF's listing/file API otherwise; S3 pagination is the core store's.
    """

    def __init__(self, store: ObjectStore, project: str, backend: str = "s3", *, worm: bool = False) -> None:
        if backend not in ("s3", "hf"):
            raise ValueError(f"backend must be s3 or hf, not {backend!r}")
        self.store = store
        self.project = project
        self.backend = backend
        self.worm = worm
        self.bytes_written = 0

    def _k(self, key: str) -> str:
        return f"{self.project}/{key}"

    def _guard(self, key: str) -> None:
        if self.worm and key.startswith("memory/_history/") and self.store.exists(self._k(key)):
            raise TracecraftError(f"object lock: {key} is immutable")

    def put_bytes(self, key: str, body: bytes, *, if_none_match: bool = False) -> None:
        """PUT raw bytes (``put_file``); conditional create with *if_none_match*."""
        self._guard(key)
        self.store.put(self._k(key), body, if_none_match=if_none_match)
        self.bytes_written += len(body)

    def put_json(self, key: str, doc: Any, *, if_none_match: bool = False) -> None:
        """PUT a JSON document (S3 ``IfNoneMatch="*"`` when *if_none_match*)."""
        self.put_bytes(key, dumps(doc), if_none_match=if_none_match)

    def get_bytes(self, key: str) -> bytes | None:
        """GET raw bytes, None when missing."""
        return self.store.get(self._k(key))

    def get_json(self, key: str) -> Any:
        """GET a JSON document, None when missing."""
        return loads(self.get_bytes(key))

    def exists(self, key: str) -> bool:
        """HEAD."""
        return self.store.exists(self._k(key))

    def delete(self, key: str) -> None:
        """DELETE (missing is fine)."""
        self._guard(key)
        self.store.delete(self._k(key))

    def list_keys(self, prefix: str = "", start_after: str | None = None) -> list[str]:
        """Project-relative keys under *prefix* (recursive), sorted, excluding keys ``<=`` *start_after*."""
        n = len(self.project) + 1
        after = self._k(start_after) if start_after else None
        return [k[n:] for k in self.store.list(self._k(prefix), after)]

    def compare_and_put_json(self, key: str, doc: Any, expected: bytes | None) -> bool:
        """PUT *doc* only if the body is still *expected* (an If-Match ETag write); False if it changed.

        Not modeled: the ETag itself; the GET and PUT are atomic because no process runs between them.
        """
        if self.store.get(self._k(key)) != expected:
            return False
        self.put_json(key, doc)
        return True
