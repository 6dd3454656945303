"""Speaker roles of a two-person corpus (issue 38): which LoCoMo speaker plays ``user``, which
``assistant``, as a stated, recorded choice (``memsim bench --roles``).

LoCoMo is a conversation between two people (``speaker_a``, ``speaker_b``), neither of them an
assistant; every memory design memsim models is written for a user talking to an assistant, and some
treat the two roles differently (docs/conversations.md, "Speaker roles", says how each adapter uses
them: one seed adapter's conversation save keeps user turns only and never an assistant turn; two pair a
user turn with the assistant turn after it as one exchange; one ignores roles).

**Default ``both=user``**: both speakers are users. LoCoMo asks about both speakers alike, and a mapping
that makes a design discard one person's turns by construction (as ``a=user,b=assistant`` does for the
adapter that saves user turns only: it can then recall at most about half of the evidence, whatever its
window) measures the
mapping, not the design. Each turn keeps its speaker's name (``speaker: text``), so who said what is not
lost. ``--roles a=user,b=assistant`` is the loader's positional reading (memsim 0.2's only one);
``swap`` is ``a=assistant,b=user``.

The choice is applied to each instance after loading (:func:`apply_roles`; the loader reads
``speaker_a`` as ``user`` and ``speaker_b`` as ``assistant``, :mod:`sim.conversations.formats.locomo`)
and recorded with the run (``roles`` in the outputs' ``meta``). LongMemEval's roles are the dataset's
own, and a native file's turns are user turns: ``--roles`` applies to LoCoMo only.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from sim.conversations.model import Instance
from sim.errors import UsageError

ROLE_NAMES = ("user", "assistant")
#: The workload kinds ``--roles`` applies to (two named speakers).
TWO_PERSON = ("locomo",)


@dataclass(frozen=True)
class Roles:
    """The role of ``speaker_a`` (*a*) and of ``speaker_b`` (*b*)."""

    a: str
    b: str

    def text(self) -> str:
        """The canonical ``--roles`` text of this mapping (``both=user`` or ``a=user,b=assistant``)."""
        return f"both={self.a}" if self.a == self.b else f"a={self.a},b={self.b}"


#: The default: both speakers are users (see the module docstring for why).
DEFAULT_ROLES = Roles("user", "user")
#: The loader's positional reading: ``speaker_a`` the user, ``speaker_b`` the assistant.
POSITIONAL = Roles("user", "assistant")

_ITEM = re.compile(r"\s*(a|b|both)\s*=\s*(user|assistant)\s*")


def parse_roles(text: str) -> Roles:
    """``--roles``: ``both=ROLE``, ``a=ROLE,b=ROLE`` (either order), or ``swap`` (``a=assistant,b=user``);
    ROLE ``user`` or ``assistant``."""
    t = text.strip().lower()
    if t == "swap":
        return Roles("assistant", "user")
    got: dict[str, str] = {}
    for item in t.split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise UsageError(
                f"--roles: {item.strip()[:40]!r} is not SPEAKER=ROLE (expected both=user, a=user,b=assistant "
                "or swap; ROLE user or assistant)"
            )
        if m[1] in got or (m[1] == "both" and got) or ("both" in got):
            raise UsageError(f"--roles sets a speaker twice: {text.strip()[:60]!r}")
        got[m[1]] = m[2]
    if "both" in got:
        return Roles(got["both"], got["both"])
    if set(got) != {"a", "b"}:
        raise UsageError(f"--roles must set both speakers (a= and b=, or both=), not {text.strip()[:60]!r}")
    return Roles(got["a"], got["b"])


def apply_roles(instance: Instance, roles: Roles) -> Instance:
    """*instance* (a LoCoMo sample as the loader reads it: ``speaker_a`` ``user``, ``speaker_b``
    ``assistant``) with *roles*; the same object when *roles* is the loader's reading."""
    if roles == POSITIONAL:
        return instance
    role = {"user": roles.a, "assistant": roles.b}
    turns = tuple(dataclasses.replace(t, role=role[t.role]) for t in instance.turns)
    return dataclasses.replace(instance, turns=turns)


def roles_for(kind: str, text: str | None) -> Roles | None:
    """The run's roles for workload *kind*: ``--roles`` *text* (or :data:`DEFAULT_ROLES`) for a
    two-person corpus; None for the others, where ``--roles`` is refused."""
    if kind not in TWO_PERSON:
        if text is not None:
            raise UsageError(
                f"--roles applies to two-person corpora (locomo:FILE); {kind} turns keep the dataset's roles"
            )
        return None
    return DEFAULT_ROLES if text is None else parse_roles(text)
