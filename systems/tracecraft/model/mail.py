"""Mail and the inbox cursor: ``send`` and ``inbox`` (RT-RTE-mail-exchange, MEM-OBJ-inbox-cursor)."""

from __future__ import annotations

from typing import Any

from systems.tracecraft import faults as fp
from systems.tracecraft.model.core import ClientCore, Gen, validate_recipient
from systems.tracecraft.protocol import (
    TracecraftError,
    advance_stream,
    append_key,
    cursor_key,
    direct_children,
    key_sender,
    load_stream_cursor,
    stamp_above,
    unseen_keys,
)
from systems.tracecraft.state import InboxLine


class MailService(ClientCore):
    """Mail commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- mail (RT-RTE-mail-exchange, MEM-OBJ-message-content, MEM-OBJ-inbox-cursor) ---------------------
    def send(self, recipient: str, message: str, step: str | None = None, *, delay: float = 0.0) -> Gen:
        """(RT-RTE-mail-exchange, MEM-OBJ-message-content) PUT ``{from, to, message, sent_at[, step]}``
        at ``append_key(messages/<R>/)`` (``cli/messages.py:28-53``).

        The recipient is validated (stripped, non-empty, no ``/``, ``_`` only for ``_broadcast``); the
        sender is not. The key is stamped with the writer's clock at the start; *delay* seconds pass between
        stamping and the PUT (a late arrival). The mailbox-stamp fix LISTs the mailbox above its own clock
        first and stamps ``max(own clock, newest key + 1 ns)`` (``protocol.stamp_above``).
        Raises :class:`TracecraftError` for an invalid recipient.
        """
        r = validate_recipient(recipient)
        yield from self._command()
        prefix = f"messages/{r}/"
        ts = self.clock.ns()
        doc: dict[str, Any] = {
            "from": self.agent_id,
            "to": r,
            "message": message,
            "sent_at": self.clock.iso(),
        }
        if step:
            doc["step"] = step
        if self.variant.has("mailbox-stamp"):
            yield from self._rt()
            own = self.clock.ns()
            ts = stamp_above(own, self.b.list_keys(prefix, f"{prefix}{own}"), prefix)
        key = append_key(prefix, self.agent_id, ts, self._hex())
        if delay > 0:
            yield self.sim.timeout(delay)
        yield from self._rt()
        self.b.put_json(key, doc)
        self._print(f"Sent to {r}: {message}")
        self._op("send", to=r, key=key, message=message)
        return key

    def _cursor_key(self) -> str:
        if self.variant.has("reader-cursor"):
            return f"messages/{self.agent_id}/_cursor.{self.reader}.json"
        return cursor_key(self.agent_id)

    def inbox(self, new: bool = False, delete: bool = False) -> Gen:
        """(RT-RTE-mail-exchange, MEM-OBJ-inbox-cursor) Direct + broadcast mail: plain, --new, --delete.

        ``--new``: GET cursor → LIST → GETs → print → PUT cursor (only if any unseen key existed; own
        broadcasts count and advance it without display). ``--delete`` DELETEs each printed direct message.
        Returns the :class:`InboxLine` list. Raises :class:`TracecraftError` for both flags.
        Crash points ``tracecraft.inbox.before_cursor`` and ``tracecraft.inbox.after_delete``.
        """
        if new and delete:
            raise TracecraftError("--delete and --new are mutually exclusive")
        if delete:
            self._eprint(
                "warning: --delete is deprecated and will be removed in a future release; use `inbox --new` "
                "to read incrementally without destroying the message log."
            )
        yield from self._command()
        if self.variant.has("inbox-ignores-cursor"):
            new = False  # --new reads like a plain inbox: no cursor GET, every message, no cursor PUT
        me = self.agent_id
        dp, bp = f"messages/{me}/", "messages/_broadcast/"
        empty: dict[str, Any] = {"watermark": None, "seen": []}
        d_stream, b_stream = empty, empty
        if new:
            yield from self._rt()
            doc = self.b.get_shared(self._cursor_key())
            d_stream, b_stream = load_stream_cursor(doc, "direct"), load_stream_cursor(doc, "broadcast")
        yield from self._rt()
        d_listed = direct_children(self.b.list_keys(dp, d_stream["watermark"]), dp)
        yield from self._rt()
        b_listed = direct_children(self.b.list_keys(bp, b_stream["watermark"]), bp)
        d_cand = unseen_keys(d_listed, d_stream) if new else d_listed
        b_cand = unseen_keys(b_listed, b_stream) if new else b_listed
        rows: list[tuple[Any, InboxLine]] = []
        for kind, keys, prefix in (("direct", d_cand, dp), ("broadcast", b_cand, bp)):
            for k in keys:
                if kind == "broadcast" and key_sender(k, prefix) == me:
                    continue  # own broadcast, by the key's sender (no GET)
                yield from self._rt()
                doc = self.b.get_shared(k)
                if doc is None:
                    continue
                if kind == "broadcast" and doc.get("from", "?") == me:
                    continue  # upstream's fallback, applied to every broadcast body
                line = InboxLine(
                    k,
                    kind,
                    str(doc.get("from", "?")),
                    str(doc.get("sent_at", "?")),
                    str(doc.get("message", "")),
                    doc.get("step"),
                )
                rows.append((doc.get("sent_at", ""), line))
        rows.sort(key=lambda row: row[0])  # the sender's sent_at string ("" when missing)
        found = [] if self.variant.has("inbox-shows-nothing") else [line for _, line in rows]
        for i, m in enumerate(found):
            self._print(m.render())
            if delete and m.kind == "direct":
                yield from self._rt()
                self.b.delete(m.key)
                if i < len(found) - 1:
                    self.sim.faults.point(fp.INBOX_AFTER_DELETE)
        if not found:
            self._print("No new messages." if new else "No messages.")
        elif delete:
            deleted = sum(m.kind == "direct" for m in found)
            self._print(f"Deleted {deleted} direct message(s); broadcasts left in place.")
        if new and (d_cand or b_cand):
            self.sim.faults.point(fp.INBOX_BEFORE_CURSOR)
            now = self.clock.ns() if self.variant.has("future-guard") else None
            raise_ev = self.variant.has("seen-cap-watermark")
            cap = self.tc.seen_cap
            cursor = {
                "direct": advance_stream(
                    d_stream, d_listed, dp, seen_cap=cap, raise_on_evict=raise_ev, now_ns=now
                ),
                "broadcast": advance_stream(
                    b_stream, b_listed, bp, seen_cap=cap, raise_on_evict=raise_ev, now_ns=now
                ),
                "updated_at": self.clock.iso(),
            }
            if self.cursor_pause:  # suspended between building the cursor and its PUT
                yield self.sim.timeout(self.cursor_pause)
            yield from self._rt()
            self.b.put_json(self._cursor_key(), cursor)
        self._op("inbox", new=new, delete=delete, reader=self.reader, shown=[m.key for m in found])
        return found
