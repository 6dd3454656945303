"""The CLI route (``cli.py``): raw sources, ``collect_files``, ancestor guidance and ``nemsy ingest``.

Upstream: ``cli.py`` 368-542 (``_resolve_ingest_path``, ``_run_ingest_batch``), ``vault.py`` 343-386
(``collect_files``), 507-565 (``find_index_context``); fidelity note §2.7, §2.14.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from systems.nemsy.model.agent import Agent
from systems.nemsy.model.constants import (
    COLLECT_EXTENSIONS,
    GUIDANCE_FILE,
    RAW_DIR,
    SCAN_CONFIRM_OVER,
    SKIP_DIRS,
    WIKI_DIR,
)
from systems.nemsy.model.pages import path_key
from systems.nemsy.state import IngestOutcome


def tree_path(path: str) -> str:
    """A path as pathlib normalizes it (``.`` components and repeated or trailing slashes dropped), as a
    tree path (the tree root stands for ``/`` and for the cwd)."""
    text = str(PurePosixPath(path)).lstrip("/")
    return "" if text == "." else text


class Cli(Agent):
    """The raw-source side and the ``nemsy`` commands of one installation."""

    def write_source(self, rel: str, text: str, *, mtime: float | None = None) -> str:
        """The user writes raw source *rel* (under the raw root); *mtime* back- or forward-dates it."""
        path = f"{RAW_DIR}/{rel}"
        self.tree.write_text(path, text, clock=(lambda: mtime) if mtime is not None else self.clock.seconds)
        return path

    def touch_source(self, rel: str) -> None:
        """``touch`` a raw source: same bytes, mtime now."""
        path = f"{RAW_DIR}/{rel}"
        self.tree.write_bytes(path, self.tree.read_bytes(path), clock=self.clock.seconds)

    def is_file(self, path: str) -> bool:
        """Whether tree path *path* (as :func:`tree_path` gives it) is a file (``""``, the root, is not)."""
        return bool(path) and self.tree.exists(path)

    def is_dir(self, path: str) -> bool:
        """Whether tree path *path* is a directory with files; ``""`` (the root: the working directory) always
        is one, as ``Path.cwd()`` always exists."""
        return not path or self.tree.is_dir(path)

    def collect_files(
        self,
        path: str,
        *,
        recursive: bool = False,
        extensions: Sequence[str] = COLLECT_EXTENSIONS,
        ignore_dirs: Sequence[str] = (),
    ) -> list[str]:
        """(RT-RTE-document-ingest) ``vault.collect_files`` (``vault.py`` 343-386): a file gives ``[path]`` if
        its suffix matches; a directory gives its files (direct children only, unless *recursive*) with a
        matching suffix and name ≠ ``_index.md``, skipping any path with a part in the skip set (matched
        against every part, ancestors included), sorted; anything else gives ``[]``. ``""`` is the tree
        root, which stands for the working directory (always a directory)."""
        path = tree_path(path)
        if self.is_file(path):
            return [path] if PurePosixPath(path).suffix in extensions else []
        if not self.is_dir(path):
            return []
        skip = SKIP_DIRS | {WIKI_DIR.rsplit("/", 1)[-1]} | set(ignore_dirs)
        prefix = path + "/" if path else ""
        out = []
        for f in self.tree.list(path):
            rest = f[len(prefix) :]
            if not recursive and "/" in rest:
                continue
            p = PurePosixPath(f)
            if p.suffix not in extensions or p.name == GUIDANCE_FILE:
                continue
            if any(part in skip for part in p.parts):
                continue
            out.append(f)
        return sorted(out, key=path_key)

    def find_index_context(self, file_path: str) -> str | None:
        """(MEM-OBJ-index-guidance) Ancestor ``_index.md`` guidance, farthest first, stopping after the raw
        root (or the tree root); each as ``<!-- 目录语境：label -->\\ntext``.

        Raises ValueError for a file outside the raw root that has an ancestor ``_index.md``.
        """
        dirs: list[str] = []
        cur = PurePosixPath(file_path).parent
        while True:
            d = "" if str(cur) == "." else str(cur)
            dirs.append(d)
            if d == RAW_DIR or d == "":
                break
            cur = cur.parent
        found = []
        for d in reversed(dirs):
            gpath = f"{d}/{GUIDANCE_FILE}" if d else GUIDANCE_FILE
            if not self.tree.exists(gpath):
                continue
            text = self.tree.read_text(gpath).strip()
            if not text:
                continue
            if d != RAW_DIR and not d.startswith(RAW_DIR + "/"):
                raise ValueError(f"{d or '/'} is not under the raw root {RAW_DIR}")
            label = "." if d == RAW_DIR else d[len(RAW_DIR) + 1 :]
            found.append(f"<!-- 目录语境：{label} -->\n{text}")
        return "\n\n".join(found) if found else None

    def resolve_ingest_path(self, path: str) -> str:
        """``_resolve_ingest_path`` (``cli.py`` 368-386): an absolute PATH is used as it is; a relative one is
        joined to the raw root with pathlib (which drops ``.`` components, so ``.`` is the raw root) if that
        exists, else to the cwd (the tree root): with no raw root on disk, ``.`` is the working directory
        itself (``""``), whose files are then collected and ingested as upstream does."""
        if path.startswith("/"):
            return tree_path(path)
        candidate = tree_path(f"{RAW_DIR}/{path}")
        if self.tree.exists(candidate) or self.tree.is_dir(candidate):
            return candidate
        return tree_path(path)

    def cli_ingest(
        self,
        path: str | None = None,
        *,
        recursive: bool = False,
        force: bool = False,
        dry_run: bool = False,
        wide: bool = False,
        title: str | None = None,
        confirm: bool = True,
    ) -> list[IngestOutcome]:
        """(RT-RTE-document-ingest) ``nemsy ingest [PATH] [-r] [-f] [--dry-run] [--wide] [-t T]``
        (``cli.py`` 389-542): collect, classify by hash status (empty → ledger only; done → skipped unless
        *force*; new/changed → pending). ``--dry-run`` lists the pending files and returns (empty files are
        already recorded). When the resolved path is the raw root (no PATH, ``.``, or the root's absolute
        path) and more than 20 files are pending, they are ingested only if the y/N question is answered
        yes (*confirm*). Each pending file is ingested with its ancestor guidance; the title is *title* for
        a single file (not a directory), else the stem. A damaged v2 ledger raises as upstream does.

        Not modeled: Streaming output, the terminal UI, progress bars and the printed lists.
        """
        root = RAW_DIR if path is None else self.resolve_ingest_path(path)
        files = self.collect_files(root, recursive=recursive)
        outcomes: list[IngestOutcome] = []
        pending: list[tuple[str, str, str]] = []
        for f in files:
            try:
                content = self.tree.read_text(f)
            except (OSError, UnicodeDecodeError):
                content = ""
            status = self.get_file_status(f, content)
            if status == "empty":
                self.record_ingest(f, content, ingest_mode=None)
                outcomes.append(IngestOutcome(f, status, "recorded-empty"))
            elif status == "done" and not force:
                outcomes.append(IngestOutcome(f, status, "skipped"))
            else:
                pending.append((f, content, status))
        if dry_run:
            return outcomes + [IngestOutcome(f, s, "pending") for f, _, s in pending]
        if root == RAW_DIR and len(pending) > SCAN_CONFIRM_OVER and not confirm:
            return outcomes + [IngestOutcome(f, s, "cancelled") for f, _, s in pending]
        single = self.is_file(root) and len(files) == 1  # a file, not a directory
        for f, content, status in pending:
            t = (title if single and title else None) or PurePosixPath(f).stem
            page = self.ingest(content, t, source_path=f, index_context=self.find_index_context(f), wide=wide)
            outcomes.append(IngestOutcome(f, status, "ingested", page))
        return outcomes

    def sources(self) -> dict[str, str]:
        """``GET /api/sources``, ``nemsy sources`` and chat ``/sources``: every raw source (``.md``/``.txt``,
        recursive) with its display status. Read-only."""
        return {f: self.display_status(f) for f in self.collect_files(RAW_DIR, recursive=True)}
