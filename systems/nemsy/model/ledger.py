"""The ingest ledger (``.nemsy/ingest_log.json``, v2) and the token log (``.nemsy/token_log.json``).

Upstream: ``vault.py`` 224-332 (ledger: ``load_ingest_log``, ``get_file_status``, ``record_ingest``),
393-504 (token log), ``web.py`` 150-197 and ``cli.py`` 613-656 (the display status); fidelity note §2.8,
§2.15.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from sim.tokens import count_tokens
from systems.nemsy import faults as fp
from systems.nemsy.model.base import Base
from systems.nemsy.model.constants import DEFAULT_MODEL, LEDGER_PATH, LEDGER_VERSION, TOKEN_LOG_PATH
from systems.nemsy.model.ledgerfiles import LedgerFile, TokenLogFile
from systems.nemsy.state import (
    FIX_HASH_STATUS,
    FIX_LEDGER_BACKUP,
    FIX_LEDGER_FAILED,
    FIX_PARSER_REJECT_EMPTY,
    FIX_STRICT_PARSER,
    OFF_DISPLAY_ALWAYS_NEW,
    OFF_LEDGER_NOT_WRITTEN,
    LedgerRecord,
)


def content_hash(text: str) -> str:
    """The ledger hash: sha256 hex of the *stripped* UTF-8 content (empty: the ``e3b0c442…`` constant)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def cli_file_status(record: LedgerRecord | None, content: str) -> str:
    """``get_file_status``: ``empty`` (stripped content empty), ``new`` (no record), ``done`` (hash
    matches) or ``changed``."""
    if not content.strip():
        return "empty"
    if record is None:
        return "new"
    if record.hash == content_hash(content):
        return "done"
    return "changed"


def _naive(ts: float) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).replace(tzinfo=None)


def display_file_status(record: LedgerRecord | None, size: int, mtime: float) -> str:
    """The web/``nemsy sources`` badge: ``empty`` (0 bytes), ``new`` (no record or no ``ingested_at``),
    ``changed`` (mtime later than the last ``ingested_at``) or ``done``."""
    if size == 0:
        return "empty"
    if record is None or not record.ingested_at:
        return "new"
    if _naive(mtime) > _dt.datetime.fromisoformat(record.ingested_at[-1]):
        return "changed"
    return "done"


def summarize_token_log(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """(MEM-OBJ-token-log) ``summarize_token_log()``: totals, and calls/tokens by command and by model."""
    by_command: dict[str, dict[str, int]] = {}
    by_model: dict[str, dict[str, int]] = {}
    out = {"total_calls": 0, "total_prompt_tokens": 0, "total_completion_tokens": 0, "total_tokens": 0}
    for r in records:
        out["total_calls"] += 1
        out["total_prompt_tokens"] += int(r.get("prompt_tokens", 0))
        out["total_completion_tokens"] += int(r.get("completion_tokens", 0))
        out["total_tokens"] += int(r.get("total_tokens", 0))
        for table, key in ((by_command, r.get("command", "")), (by_model, r.get("model", ""))):
            row = table.setdefault(str(key), {"calls": 0, "tokens": 0})
            row["calls"] += 1
            row["tokens"] += int(r.get("total_tokens", 0))
    return {**out, "by_command": by_command, "by_model": by_model}


class Ledger(Base):
    """The ingest ledger and the token log of one installation."""

    def rescan(self) -> None:
        """Forget what the writers know of the JSON files (they may have been written behind the model)."""
        self._ledger_file = LedgerFile()
        self._backup_file = LedgerFile()
        self._token_file = TokenLogFile()

    def load_ingest_log(self) -> dict[str, Any]:
        """(MEM-OBJ-ingest-log) ``load_ingest_log`` (``vault.py`` 246-263): a missing file, invalid JSON, a
        non-dict or a version other than 2 reads as an empty v2 ledger; any dict whose version is 2 is used
        as it is, with no shape check (a missing ``files``, a non-dict record or a null ``ingested_at`` then
        raises where it is used, as upstream does), and a file that is not UTF-8 raises
        UnicodeDecodeError. The ledger-backup fix reads the backup (written beside every save) when the
        main file is missing, unreadable or would read as empty.
        """
        if self._ledger_cache is not None:
            return self._ledger_cache
        if self._ledger_dropped():
            # the file is the document the model last wrote (and let go): read it back, as no operation
            size = self.tree.size(LEDGER_PATH)
            data = json.loads(self.tree.peek(LEDGER_PATH, 0, size))
            self._ledger_file.adopt(data)
            self._backup_file.adopt(data)
            self._ledger_cache = data
            return data
        try:
            data = self._parse_ledger(LEDGER_PATH)
        except UnicodeDecodeError:
            if not self.fixed(FIX_LEDGER_BACKUP):
                raise
            data = None
        if data is None and self.fixed(FIX_LEDGER_BACKUP):
            data = self._parse_ledger(LEDGER_PATH + ".bak")
        if data is None:
            data = {"version": LEDGER_VERSION, "files": {}}
        self._ledger_cache = data
        return data

    def _parse_ledger(self, path: str) -> dict[str, Any] | None:
        if not self.tree.exists(path):
            return None
        text = self.tree.read_text(
            path
        )  # UnicodeDecodeError propagates: upstream catches JSON/OS errors only
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        if isinstance(data, dict) and data.get("version") == LEDGER_VERSION:
            return data
        return None

    def _save_ledger(self, data: dict[str, Any], changed: str | None = None) -> None:
        """``_save_ledger``: the whole document as ``json.dumps(ensure_ascii=False, indent=2)`` (only the
        changed tail is rewritten on the tree; ``bytes_written`` counts upstream's whole rewrite). *changed*
        names the one record changed since the last save, when that is all."""
        self.sim.faults.point(fp.LEDGER_WRITE)
        clock = self.clock.seconds
        self.bytes_written += self._ledger_file.write(self.tree, LEDGER_PATH, data, changed, clock)
        backup = self.fixed(FIX_LEDGER_BACKUP)
        if backup:
            self.bytes_written += self._backup_file.write(
                self.tree, LEDGER_PATH + ".bak", data, changed, clock
            )
        self._ledger_cache = data
        writers = (self._ledger_file, self._backup_file) if backup else (self._ledger_file,)
        if not self.hold_ledger and all(w.droppable for w in writers):
            for w in writers:
                w.drop()
            self._ledger_cache = None

    def _ledger_dropped(self) -> bool:
        """Whether the ledger's document is not held (``hold_ledger`` False) but is the file as the model
        last wrote it, so a record is read back from the file by key."""
        if self._ledger_cache is not None or not self._ledger_file.dropped:
            return False
        return not self.fixed(FIX_LEDGER_BACKUP) or self._backup_file.dropped

    def _ledger_get(self, key: str, default: Any = None) -> Any:
        """``load_ingest_log()["files"].get(key, default)``, read back from the file when not held."""
        if self._ledger_dropped():
            return self._ledger_file.get(self.tree, LEDGER_PATH, key, default)
        return self.load_ingest_log()["files"].get(key, default)

    def _put_ledger_record(self, key: str, record: dict[str, Any]) -> None:
        """``data["files"][key] = record`` and ``_save_ledger`` on the document the model let go: the file
        and its backup are written as the whole document's rewrite would leave them."""
        self.sim.faults.point(fp.LEDGER_WRITE)
        clock = self.clock.seconds
        self.bytes_written += self._ledger_file.put(self.tree, LEDGER_PATH, key, record, clock)
        if self.fixed(FIX_LEDGER_BACKUP):
            self.bytes_written += self._backup_file.put(self.tree, LEDGER_PATH + ".bak", key, record, clock)

    def corrupt_ingest_log(self, text: str | bytes = "{not json") -> None:
        """Overwrite ``ingest_log.json`` with *text* (a crash mid-write, a hand edit, an old version)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        self.tree.write_bytes(LEDGER_PATH, data, clock=self.clock.seconds)
        self._ledger_cache = None
        self._ledger_file.forget()
        self._op("corrupt_ingest_log", chars=len(data))

    def delete_ingest_log(self) -> None:
        """Delete ``ingest_log.json`` (a user cleaning ``.nemsy/``)."""
        if self.tree.exists(LEDGER_PATH):
            self.tree.delete(LEDGER_PATH)
        self._ledger_cache = None
        self._ledger_file.forget()
        self._op("delete_ingest_log")

    def ledger_record(self, source_path: str) -> LedgerRecord | None:
        """The ledger record of *source_path* (a tree path) for checkers: None when there is none or the
        ledger or record is not shaped as upstream writes it."""
        files = self.load_ingest_log().get("files")
        raw = files.get(self.resolved(source_path)) if isinstance(files, dict) else None
        return LedgerRecord.from_json(raw)

    def record_ingest(
        self,
        source_path: str,
        content: str,
        *,
        ingest_mode: str | None = "full",
        wiki_page: str | None = None,
        failed: bool = False,
    ) -> LedgerRecord | None:
        """(MEM-OBJ-ingest-log) ``record_ingest`` (``vault.py`` 290-322): the v2 record (stripped-content
        hash, prior hash, unstripped UTF-8 size, ``empty``/``done``, the timestamp appended to the prior
        list, the prior ``wiki_page`` kept when *wiki_page* is None) stored into the loaded document, which
        is written back whole: unknown top-level keys, their order and the record's position survive.

        *failed* records a write that produced no page as ``failed`` (the empty-summary-rejected fix's
        rejection); the ledger-failed-status fix does so for every missing page.

        Raises KeyError (no ``files``), AttributeError (``files`` or the prior record not a dict) or
        TypeError (a prior ``ingested_at`` that is not a list) as upstream does, writing nothing; and
        :class:`sim.faults.WriteFailed` at ``nemsy.record_ingest.write``.
        """
        if self.fixed(OFF_LEDGER_NOT_WRITTEN):
            return None
        status = "empty" if not content.strip() else "done"
        dropped = self._ledger_dropped()
        data = None if dropped else self.load_ingest_log()
        key = self.resolved(source_path)
        existing = self._ledger_get(key, {}) if data is None else data["files"].get(key, {})
        record = {
            "hash": content_hash(content),
            "prev_hash": existing.get("hash"),
            "size": len(content.encode("utf-8")),
            "status": status,
            "ingest_mode": ingest_mode,
            "ingested_at": existing.get("ingested_at", []) + [self.now_naive_iso()],  # noqa: RUF005 (TypeError)
            "wiki_page": wiki_page or existing.get("wiki_page"),
        }
        if status == "done" and wiki_page is None and (self.fixed(FIX_LEDGER_FAILED) or failed):
            record["status"] = "failed"
        try:
            if data is None:
                self._put_ledger_record(key, record)
            else:
                data["files"][key] = record
                self._save_ledger(data, key)
        except BaseException:
            self._ledger_cache = None  # the file still holds the previous document
            self._ledger_file.forget()
            self._backup_file.forget()
            raise
        self._op("record_ingest", source=key, status=record["status"], wiki_page=record["wiki_page"])
        return LedgerRecord.from_json(record)

    def get_file_status(self, source_path: str, content: str) -> str:
        """(MEM-OBJ-ingest-log) ``get_file_status`` (``vault.py`` 266-287), the CLI status: ``empty`` (the
        stripped content is empty), ``new`` (no record), ``done`` (the hash matches) or ``changed`` (and
        ``failed``, pending, under the ledger-failed-status fix). Raises KeyError or AttributeError on a
        damaged v2 ledger, as upstream does.
        """
        if not content.strip():
            return "empty"
        record = self._ledger_get(self.resolved(source_path))
        if record is None:
            return "new"
        digest = record.get("hash")
        if record.get("status") == "failed" and self._writes_failed():
            return "failed"
        return "done" if digest == content_hash(content) else "changed"

    def _writes_failed(self) -> bool:
        """Whether a fix that records ``failed`` (and counts it as pending) is on."""
        return any(self.fixed(f) for f in (FIX_LEDGER_FAILED, FIX_PARSER_REJECT_EMPTY, FIX_STRICT_PARSER))

    def display_status(self, source_path: str) -> str:
        """(MEM-OBJ-ingest-log) The ``/api/sources`` badge (``web.py`` 150-197, also ``nemsy sources``):
        ``empty`` (0 bytes), ``new`` (no record, or no ``ingested_at``), ``changed`` (mtime later than the
        last ``ingested_at``) or ``done`` (also when that timestamp does not parse); the hash-status fix
        shows the CLI status instead.

        Not modeled: the CLI ``sources`` tree raising on an unparsable ingested_at (the web shows done).
        """
        data = self.tree.read_bytes(source_path)
        if self.fixed(OFF_DISPLAY_ALWAYS_NEW):
            return "new"
        if self.fixed(FIX_HASH_STATUS):
            return self.get_file_status(source_path, data.decode("utf-8", "replace"))
        log_files = self.load_ingest_log().get("files", {})
        if len(data) == 0:
            return "empty"
        record = log_files.get(self.resolved(source_path))
        if record is None:
            return "new"
        ingested_at = record.get("ingested_at", [])
        last = ingested_at[-1] if ingested_at else None
        if not last:
            return "new"
        try:
            return (
                "changed"
                if _naive(self.tree.mtime(source_path)) > _dt.datetime.fromisoformat(last)
                else "done"
            )
        except ValueError:
            return "done"

    # -- the token log -----------------------------------------------------------------------------------
    def _record_tokens(
        self, command: str, prompt_tokens: int, response: str, model: str = DEFAULT_MODEL
    ) -> None:
        """(MEM-OBJ-token-log) Append ``{timestamp, command, model, prompt/completion/total tokens}``.

        With :attr:`hold_token_log` False the records are not kept in memory after they are written: the
        file holds them (:meth:`load_token_log` reads it back), and each new record is appended to it as
        the whole list's rewrite would end (issue 33; the same bytes, ``bytes_written`` and operations)."""
        completion = count_tokens(response) if self.record_requests else 0
        record = {
            "timestamp": self.now_naive_iso(),
            "command": command,
            "model": model,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        }
        clock = self.clock.seconds
        if not self.hold_token_log:
            size = self._token_file.append(self.tree, TOKEN_LOG_PATH, record, clock)
            if size is not None:
                self.bytes_written += size
                return
        records = self.load_token_log()
        records.append(record)
        self._tokens_cache = records
        self.bytes_written += self._token_file.write(self.tree, TOKEN_LOG_PATH, records, clock)
        if not self.hold_token_log:
            self._tokens_cache = None
            self._token_file.drop()

    def load_token_log(self) -> list[dict[str, Any]]:
        """``token_log.json`` (an invalid or non-list file reads as ``[]``)."""
        if self._tokens_cache is not None:
            return self._tokens_cache
        records: list[dict[str, Any]] = []
        if self.tree.exists(TOKEN_LOG_PATH):
            try:
                data = json.loads(self.tree.read_text(TOKEN_LOG_PATH))
                records = data if isinstance(data, list) else []
            except ValueError:
                records = []
        self._tokens_cache = records
        return records

    def summarize_token_log(self) -> dict[str, Any]:
        """(MEM-OBJ-token-log) The token-log summary shown by ``nemsy status`` and ``/api/status``."""
        return summarize_token_log(self.load_token_log())
