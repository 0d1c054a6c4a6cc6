"""Garbage collection of a checkpoint store (``pi-lsp session gc``).

A blob stays while something may still need it: a checkpoint entry of a session file in the
directory (on any branch), or the ledger — what pi-lsp last left in each file, and the contents
the last restore of each session replaced (so navigating back still works). Everything else is
removed, except blobs younger than ``min_age_seconds``: a running agent stores a change's
contents a moment before the session file refers to them, and gc must not take them in between.

The ledger is condensed on the way: one record per file (the latest state) and the last restore
of each session whose file still exists; the history in between is dropped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import attrs

from pi_lsp.checkpoints.blobs import BlobStore, StoreSize, store_root
from pi_lsp.checkpoints.ledger import Ledger
from pi_lsp.checkpoints.records import CHECKPOINT_TYPE, changes_of

DEFAULT_MIN_AGE_SECONDS = 3600


@attrs.frozen
class GcReport:
    store: str
    sessions: int
    """Session files read."""
    removed: StoreSize
    kept: StoreSize
    kept_young: int
    """Unreferenced blobs kept because they are younger than the minimum age."""

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "sessions": self.sessions,
            "removedBlobs": self.removed.blobs,
            "removedBytes": self.removed.stored_bytes,
            "keptBlobs": self.kept.blobs,
            "keptBytes": self.kept.stored_bytes,
            "keptYoung": self.kept_young,
        }


def collect_garbage(
    session_dir: Path, *, min_age_seconds: float = DEFAULT_MIN_AGE_SECONDS, now: float | None = None
) -> GcReport:
    """Remove the blobs of ``session_dir``'s store that nothing refers to; what stays and goes."""
    root = store_root(session_dir)
    store, ledger = BlobStore(root), Ledger(root)
    now = time.time() if now is None else now
    with ledger.locked():
        session_ids, referenced, sessions = _session_references(session_dir)
        records = _condensed(ledger.records(), session_ids)
        if ledger.path.exists():
            ledger.rewrite(records)
        referenced |= _ledger_references(records)
        removed_count = removed_bytes = kept_count = kept_bytes = young = 0
        for blob in store.blobs():
            if blob.digest in referenced:
                kept_count, kept_bytes = kept_count + 1, kept_bytes + blob.stored_bytes
            elif now - blob.modified < min_age_seconds:
                young += 1
                kept_count, kept_bytes = kept_count + 1, kept_bytes + blob.stored_bytes
            else:
                store.delete(blob.digest)
                removed_count, removed_bytes = removed_count + 1, removed_bytes + blob.stored_bytes
    return GcReport(
        str(root),
        sessions,
        StoreSize(removed_count, removed_bytes),
        StoreSize(kept_count, kept_bytes),
        young,
    )


def _session_references(session_dir: Path) -> tuple[set[str], set[str], int]:
    """(session ids, hashes their checkpoint entries name, how many files were read)."""
    ids: set[str] = set()
    digests: set[str] = set()
    count = 0
    if not session_dir.is_dir():
        return ids, digests, count
    for path in sorted(session_dir.glob("*.jsonl")):
        count += 1
        with open(path, "rb") as handle:
            for number, line in enumerate(handle):
                if number > 0 and CHECKPOINT_TYPE.encode() not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(entry, dict):
                    continue
                if number == 0 and entry.get("type") == "session":
                    ids.add(str(entry.get("id")))
                for change in changes_of(entry):
                    digests.update(d for d in (change.before, change.after) if d is not None)
    return ids, digests, count


def _condensed(records: list[dict[str, Any]], live_sessions: set[str]) -> list[dict[str, Any]]:
    """The last restore of each session still there, then the latest state of every file."""
    latest = Ledger.replay(records)
    last_restore = {
        record["session"]: record
        for record in records
        if record.get("kind") == "restore" and record.get("session") in live_sessions
    }
    states = [
        {"path": path, "unrestorable": clean.unknown_reason}
        if clean.unknown_reason is not None
        else {"path": path, "clean": sorted(clean.contents, key=lambda digest: digest or "")}
        for path, clean in latest.items()
    ]
    return [*last_restore.values(), {"kind": "state", "files": states}]


def _ledger_references(records: list[dict[str, Any]]) -> set[str]:
    digests: set[str] = set()
    for record in records:
        for item in record.get("files") or []:
            if isinstance(item, dict):
                for key in ("content", "replaced", "restored"):
                    if isinstance(item.get(key), str):
                        digests.add(item[key])
                clean = item.get("clean")
                if isinstance(clean, list):
                    digests.update(digest for digest in clean if isinstance(digest, str))
    return digests
