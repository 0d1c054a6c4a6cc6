"""The ledger: what pi-lsp last left in each file, and what each restore replaced.

A restore must never destroy the user's work, so it needs to know, for every file, the content
pi-lsp itself last put there: the agent's latest change (in any session of the directory, on any
branch) or the latest restore. A file whose content is something else was changed by someone
else since: a conflict. The session tree cannot tell this (it orders changes by branch, not by
time), so the store keeps a ledger, ``<store>/ledger.jsonl``, one JSON line per event:

- ``{"kind": "agent", "session", "at", "files": [{"path", "content"} | {"path", "unrestorable"}]}``
  after each tool call that changed files;
- ``{"kind": "restore", "session", "at", "from", "to", "files": [{"path", "replaced",
  "restored", "forced"}]}`` after each restore; ``replaced`` keeps the content that was there (its
  blob stays in the store), so navigating back to ``from`` puts it back exactly, user edits that
  ``force`` overwrote included;
- ``{"kind": "state", "files": [{"path", "clean": [hashes]} | {"path", "unrestorable"}]}``, the
  condensed form gc leaves of everything before.

Paths are absolute; a null content means the file did not exist. Every append takes an exclusive
``flock`` on ``ledger.lock`` and writes whole lines, so several servers may share a store; readers
take only complete lines and re-read from the start when gc has rewritten the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

LEDGER_FILE = "ledger.jsonl"
LOCK_FILE = "ledger.lock"


@attrs.frozen
class CleanContents:
    """The contents of a file that pi-lsp itself left there (any other content is a conflict)."""

    contents: frozenset[str | None]
    """Hashes (None: the file is absent) the file may have without being a conflict."""
    unknown_reason: str | None = None
    """Set when pi-lsp cannot know (its last change kept no contents: binary, too large)."""


@attrs.frozen
class RestoredFile:
    path: str
    replaced: str | None
    restored: str | None
    forced: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "replaced": self.replaced,
            "restored": self.restored,
            "forced": self.forced,
        }


@attrs.frozen
class RestoreRecord:
    """One restore of one session: from which leaf to which, and what it did to each file."""

    session: str
    from_leaf: str | None
    to_leaf: str | None
    files: tuple[RestoredFile, ...]


class Ledger:
    """The ledger file of one store, read incrementally."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LEDGER_FILE
        self._offset = 0
        self._inode: int | None = None
        self._clean: dict[str, CleanContents] = {}
        self._last_restore: dict[str, RestoreRecord] = {}

    # ------------------------------------------------------------------ writing

    def record_agent_change(
        self, session: str, at: str, files: list[tuple[str, str | None, str | None]]
    ) -> None:
        """The agent changed ``files``: (absolute path, content hash or None, unrestorable)."""
        self.append(
            {
                "kind": "agent",
                "session": session,
                "at": at,
                "files": [
                    {"path": path, "unrestorable": reason}
                    if reason is not None
                    else {"path": path, "content": content}
                    for path, content, reason in files
                ],
            }
        )

    def record_restore(self, at: str, record: RestoreRecord) -> None:
        self.append(
            {
                "kind": "restore",
                "session": record.session,
                "at": at,
                "from": record.from_leaf,
                "to": record.to_leaf,
                "files": [file.to_json() for file in record.files],
            }
        )

    def append(self, record: Mapping[str, Any]) -> None:
        line = _line(record)
        with self.locked(), open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the ledger's lock (appends and gc's rewrite exclude each other)."""
        self.root.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    # ------------------------------------------------------------------ reading

    def clean_contents(self, path: str) -> CleanContents | None:
        """What pi-lsp last left in ``path`` (absolute); None when the ledger has no word on it."""
        self.refresh()
        return self._clean.get(path)

    def last_restore(self, session: str) -> RestoreRecord | None:
        self.refresh()
        return self._last_restore.get(session)

    def refresh(self) -> None:
        """Take in the lines appended since the last read (all of them after a rewrite)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._reset(None)
            return
        if stat.st_ino != self._inode or stat.st_size < self._offset:
            self._reset(stat.st_ino)
        if stat.st_size == self._offset:
            return
        with open(self.path, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        complete = data[: data.rfind(b"\n") + 1]  # a line being written is taken next time
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a damaged line: the rest of the ledger still counts
            if isinstance(record, dict):
                self._take(record)

    def _reset(self, inode: int | None) -> None:
        self._inode, self._offset = inode, 0
        self._clean.clear()
        self._last_restore.clear()

    def _take(self, record: dict[str, Any]) -> None:
        files = record.get("files")
        if not isinstance(files, list):
            return
        if record.get("kind") == "agent":
            for item in files:
                if isinstance(item, dict) and isinstance(item.get("path"), str):
                    reason = item.get("unrestorable")
                    self._clean[item["path"]] = (
                        CleanContents(frozenset(), str(reason))
                        if reason is not None
                        else CleanContents(frozenset({item.get("content")}))
                    )
        elif record.get("kind") == "state":
            for item in files:
                if isinstance(item, dict) and isinstance(item.get("path"), str):
                    reason, clean = item.get("unrestorable"), item.get("clean")
                    if reason is not None:
                        self._clean[item["path"]] = CleanContents(frozenset(), str(reason))
                    elif isinstance(clean, list):
                        self._clean[item["path"]] = CleanContents(frozenset(map(_text, clean)))
        elif record.get("kind") == "restore":
            restored = tuple(_restored_files(files))
            for item in restored:
                kept = {item.restored} if item.forced else {item.restored, item.replaced}
                self._clean[item.path] = CleanContents(frozenset(kept))
            session = record.get("session")
            if isinstance(session, str):
                self._last_restore[session] = RestoreRecord(
                    session, _text(record.get("from")), _text(record.get("to")), restored
                )

    @classmethod
    def replay(cls, records: list[dict[str, Any]]) -> dict[str, CleanContents]:
        """What pi-lsp last left in each file after ``records``."""
        ledger = cls(Path())
        for record in records:
            ledger._take(record)
        return ledger._clean

    def records(self) -> list[dict[str, Any]]:
        """Every record, in order (for gc)."""
        if not self.path.is_file():
            return []
        found = []
        for line in self.path.read_bytes().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    found.append(record)
        return found

    def rewrite(self, records: list[dict[str, Any]]) -> None:
        """Replace the ledger by ``records`` (gc's condensed form); the caller holds the lock."""
        temporary = self.path.with_suffix(".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.writelines(_line(record) for record in records)
        os.replace(temporary, self.path)


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _restored_files(files: list[Any]) -> Iterator[RestoredFile]:
    for item in files:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            yield RestoredFile(
                item["path"],
                _text(item.get("replaced")),
                _text(item.get("restored")),
                item.get("forced") is True,
            )
