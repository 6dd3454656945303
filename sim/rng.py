"""Named, independent random streams derived from the run seed.

``streams.get("mydesign.uuid")`` always returns the same :class:`random.Random` for the same seed and
name, and streams with different names never share state, so adding a consumer of randomness in one part
of a model cannot shift the draws seen by another. No other source of randomness is allowed in models.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int, name: str) -> int:
    """The 64-bit seed of stream *name* under run seed *seed* (sha256 of both)."""
    digest = hashlib.sha256(f"{seed}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class Streams:
    """A lazily populated map from stream name to its seeded :class:`random.Random`."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._streams: dict[str, random.Random] = {}

    def get(self, name: str) -> random.Random:
        """The stream called *name*, created on first use."""
        stream = self._streams.get(name)
        if stream is None:
            stream = self._streams[name] = random.Random(derive_seed(self.seed, name))
        return stream

    def fresh(self, name: str) -> bool:
        """Whether stream *name* has not been drawn from (nor handed out) yet: what it yields next is then a
        pure function of the seed and the name."""
        return name not in self._streams

    def hex(self, name: str, n: int = 8) -> str:
        """*n* lower-case hex characters from stream *name* (a stand-in for ``uuid4().hex[:n]``)."""
        return f"{self.get(name).getrandbits(4 * n):0{n}x}"
