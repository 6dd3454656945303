"""``tracecraft status``: agents, steps, mailboxes and session totals in one snapshot."""

from __future__ import annotations

from typing import Any

from systems.tracecraft.model.agents import AgentsService
from systems.tracecraft.model.core import Gen
from systems.tracecraft.model.sessions import SessionsService
from systems.tracecraft.model.steps import StepsService
from systems.tracecraft.protocol import (
    CURSOR_LEAF,
    cursor_key,
    is_data_leaf,
    key_sender,
    load_stream_cursor,
    unseen_keys,
)


class StatusService(AgentsService, StepsService, SessionsService):
    """Status commands of a :class:`~systems.tracecraft.model.Client`."""

    # -- status --------------------------------------------------------------------------------------
    def status(self) -> Gen:
        """(RT-RTE-step-control, RT-RTE-mail-exchange) Agents, steps, mailboxes, session totals (``_gather``).

        Mailboxes come from one ``messages/`` listing: data leaves count as mail, a ``_cursor.json`` leaf
        marks a cursor holder. Unread (what ``inbox --new`` would show: unseen direct keys plus unseen
        broadcasts from others, senders from the key or, for a non-conforming key, the body) exists only
        for cursor holders; ``_broadcast`` is always None. ``mailboxes`` is upstream's list of
        ``{agent, total, unread}``; ``unread`` maps agent to unread.
        """
        agents = yield from self.agents()
        yield from self._rt()
        step_ids = sorted({k.split("/")[1] for k in self.b.list_keys("steps/") if k.count("/") >= 2})
        steps = {}
        for sid in step_ids:
            steps[sid] = yield from self.effective_status(sid)
        yield from self._rt()
        boxes: dict[str, list[str]] = {}
        have_cursor: set[str] = set()
        for k in self.b.list_keys("messages/"):
            parts = k.split("/", 2)
            if len(parts) < 3:
                continue
            if parts[2] == CURSOR_LEAF:
                have_cursor.add(parts[1])
            elif is_data_leaf(parts[2]):
                boxes.setdefault(parts[1], []).append(k)
        bp = "messages/_broadcast/"
        b_keys = sorted(boxes.get("_broadcast", []))
        b_sender: dict[str, Any] = {}
        if have_cursor - {"_broadcast"}:
            for k in b_keys:
                sender = key_sender(k, bp)
                if sender is None:
                    yield from self._rt()
                    sender = (self.b.get_json(k) or {}).get("from")
                b_sender[k] = sender
        mailboxes = []
        unread: dict[str, int | None] = {}
        for box in sorted(set(boxes) | have_cursor):
            keys = boxes.get(box, [])
            count = None
            if box != "_broadcast" and box in have_cursor:
                yield from self._rt()
                doc = self.b.get_json(cursor_key(box)) or {}
                d, bst = load_stream_cursor(doc, "direct"), load_stream_cursor(doc, "broadcast")
                count = len(unseen_keys(sorted(keys), d)) + sum(
                    1 for k in unseen_keys(b_keys, bst) if b_sender.get(k) != box
                )
            mailboxes.append({"agent": box, "total": len(keys), "unread": count})
            unread[box] = count
        totals = yield from self.session_totals()
        self._op("status", steps=len(steps), boxes=len(mailboxes))
        return {
            "agents": agents,
            "steps": steps,
            "mailboxes": mailboxes,
            "unread": unread,
            "sessions": totals,
        }

    def session_totals(self) -> Gen:
        """``{count, total_uploaded_bytes, last_uploaded_at}`` over the non-empty metas (upstream's keys)."""
        yield from self._rt()
        metas = []
        for k in [k for k in self.b.list_keys("sessions/") if k.endswith("/meta.json")]:
            yield from self._rt()
            m = self.b.get_json(k)
            if m:
                metas.append(m)
        return {
            "count": len(metas),
            "total_uploaded_bytes": sum(m.get("total_uploaded_bytes", 0) for m in metas),
            "last_uploaded_at": max(
                (m["last_uploaded_at"] for m in metas if m.get("last_uploaded_at")), default=None
            ),
        }
