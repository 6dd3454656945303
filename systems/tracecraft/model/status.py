"""``tracecraft status``: agents, steps, mailboxes and session totals in one snapshot."""

from __future__ import annotations

import json
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

    def status(self) -> Gen:
        """(RT-RTE-step-control, RT-RTE-mail-exchange) ``status --json``'s snapshot (``cli/status.py:21-91``):
        ``{project, backend, bucket, generated_at, agents, steps, mailboxes, sessions}``.

        Steps come from one ``steps/`` listing, each resolved as ``effective_status_from_listing`` (a GET
        only for a file the listing shows). Mailboxes come from one ``messages/`` listing: data leaves count
        as mail, a ``_cursor.json`` leaf marks a cursor holder. Unread (what ``inbox --new`` would show:
        unseen direct keys plus unseen broadcasts from others, senders from the key or, for a
        non-conforming key, the body) exists only for cursor holders; ``_broadcast`` is always None.
        """
        yield from self._command()
        now = self.clock.datetime()
        agents = yield from self._collect_agents(now)
        yield from self._rt()
        step_keys = self.b.list_keys("steps/")
        present = set(step_keys)
        step_ids = sorted({k.split("/")[1] for k in step_keys if k.count("/") >= 2})
        steps = []
        for sid in step_ids:
            st, agent = yield from self._status_from_listing(sid, present)
            steps.append({"id": sid, "status": st, "agent": agent})
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
        for box in sorted(set(boxes) | have_cursor):
            keys = boxes.get(box, [])
            count = None
            if box != "_broadcast" and box in have_cursor:
                yield from self._rt()
                doc = self.b.get_shared(cursor_key(box)) or {}
                d, bst = load_stream_cursor(doc, "direct"), load_stream_cursor(doc, "broadcast")
                count = len(unseen_keys(sorted(keys), d)) + sum(
                    1 for k in unseen_keys(b_keys, bst) if b_sender.get(k) != box
                )
            mailboxes.append({"agent": box, "total": len(keys), "unread": count})
        totals = yield from self.session_totals()
        self._op("status", steps=len(steps), boxes=len(mailboxes))
        snap = {
            "project": self.tc.project,
            "backend": self.tc.backend,
            "bucket": self.tc.bucket_name,
            "generated_at": now.isoformat(),
            "agents": agents,
            "steps": steps,
            "mailboxes": mailboxes,
            "sessions": totals,
        }
        self._print(json.dumps(snap, indent=2))  # ``status --json`` (cli/status.py:176)
        return snap

    def _status_from_listing(self, sid: str, present: set[str]) -> Gen:
        """``effective_status_from_listing`` (``protocol.py:176-190``)."""
        if f"steps/{sid}/status.json" in present:
            yield from self._rt()
            data = self.b.get_shared(f"steps/{sid}/status.json")
            if data is not None:
                return data.get("status", "unknown"), data.get("agent", "?")
        if f"steps/{sid}/claim.json" in present:
            yield from self._rt()
            claim = self.b.get_shared(f"steps/{sid}/claim.json")
            if claim is not None:
                return "in_progress", claim.get("agent", "?")
        return "pending", None
