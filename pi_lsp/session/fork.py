"""Forking: a new session file holding one root→entry path of another (pi's
``createBranchedSession``).

Label entries are dropped from the path, the remaining entries re-chained so no child is orphaned,
and the labels whose targets are on the path re-created at the end as a chain of fresh label
entries (keeping their original timestamps). The new header names the old file as
``parentSession``. Like a new session, the fork is written as soon as it holds a user or assistant
message, and otherwise when its first one arrives.
"""

from __future__ import annotations

from pi_lsp.errors import EntryNotFoundError, echoed
from pi_lsp.session import entries as build
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry


def holds_conversation(source: Session, entry_id: str | None) -> bool:
    """Whether the path to ``entry_id`` holds a user or assistant message: a fork of one that
    holds none would be an empty session (the entries of a new session, a thinking level)."""
    if entry_id is None:
        return False
    return any(
        entry.type == "message" and entry.role in ("user", "assistant")
        for entry in reversed(source.branch(entry_id))
    )


def conversation_leaf(source: Session) -> str | None:
    """The leaf to fork at when no entry is named; None for an empty session."""
    leaf_id = source.leaf_id
    return leaf_id if holds_conversation(source, leaf_id) else None


def fork_session(source: Session, entry_id: str) -> Session:
    """A new session in ``source``'s directory holding the path from the root to ``entry_id``."""
    path = source.branch(entry_id)
    if not path:
        raise EntryNotFoundError(f"entry {echoed(entry_id)} not found in session {source.id}")
    kept: list[StoredEntry] = []
    parent_id = None
    for entry in path:
        if entry.type == "label":
            continue
        kept.append(entry if entry.parent_id == parent_id else _with_parent(entry, parent_id))
        parent_id = entry.id
    session_dir = source.path.parent if source.path else None
    parent_session = str(source.path) if source.path else None
    fork = Session.create(session_dir, source.cwd, parent_session=parent_session)
    kept_ids = {entry.id for entry in kept}
    for target_id, (label_text, label_timestamp) in source.label_timestamps.items():
        if target_id in kept_ids:
            label_id = build.new_entry_id(kept_ids)
            kept_ids.add(label_id)
            label = build.label(label_id, parent_id, label_timestamp, target_id, label_text)
            kept.append(StoredEntry.from_dict(label))
            parent_id = label_id
    fork.adopt_entries(kept)
    return fork


def _with_parent(entry: StoredEntry, parent_id: str | None) -> StoredEntry:
    body = dict(entry.body)
    body["parentId"] = parent_id
    return StoredEntry.from_dict(body)
