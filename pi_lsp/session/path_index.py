"""The active path of a session, indexed for views that show a window of it.

Editors ask many small questions about the root→leaf path of a big session: is this entry on it,
where, which entries the chat shows, what context edits did. Answering each by walking 100k
entries would cost what the session weighs, not what the screen shows. The index answers them
from one walk and follows the session as a turn appends to the leaf: only the new entries are
looked at; after a navigation, only the entries between the old leaf and the new one.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Mapping
from typing import Any

from pi_lsp.session.projection import CONTEXT_EDIT, ProjectedEntry, context_edit_effects
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import MISSING, StoredEntry, lines_containing

SUMMARY_TYPES = ("compaction", "branch_summary")
_SYSTEM_ROLE = b'"role":"system"'
_MAYBE_SHOWN = frozenset(("message", "compaction", "branch_summary", "custom_message"))


def shown_in_transcript(entry: StoredEntry) -> bool:
    """Whether the chat view shows ``entry``: messages (but pi 1.6's system-role ones),
    compaction and branch summaries, and custom messages meant to be displayed. (The index
    decides most messages without this: a line that never mentions a system role is not one.)"""
    entry_type = entry.type
    if entry_type == "message":
        message = entry.get("message")
        return isinstance(message, dict) and message.get("role") != "system"
    if entry_type in SUMMARY_TYPES:
        return True
    return entry_type == "custom_message" and entry.get("display") is not False


class ActivePathIndex:
    """The active path's entries, their positions, and which of them the chat shows."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.entries: list[StoredEntry] = []
        self.position: dict[Any, int] = {}
        """Entry id → index in ``entries``."""
        self.shown: list[int] = []
        """Indexes (in ``entries``) of the entries the chat shows, in path order."""
        self._effects: dict[Any, ProjectedEntry] | None = None
        self._has_context_edits = False
        self._branch_positions: tuple[int, list[int]] | None = None

    def follow(self, session: Session) -> None:
        """Catch up with the session's active path now.

        Walks up from the leaf only until it meets the path already indexed: a turn's appends
        cost the entries appended, a navigation the entries between the old and the new leaf.
        A damaged file (a parent cycle, an odd parent id) is indexed from the session's own walk.
        """
        entries, by_id = self.entries, session.by_id
        leaf = by_id.get(session.leaf_id) if session.leaf_id is not None else None
        if entries and entries[-1] is leaf:
            return
        if not entries:
            self._extend(session.branch())  # the first time: the session's own walk, cached
            return
        new: list[StoredEntry] = []
        current, keep = leaf, 0
        while current is not None:
            index = self.position.get(current.id)
            if index is not None and entries[index] is current:
                keep = index + 1
                break
            new.append(current)
            parent_id = current.parentId
            if type(parent_id) is not str or not parent_id or len(new) > len(by_id):
                if parent_id is None or parent_id == "" or parent_id is MISSING:
                    break  # the root
                self._reset()
                self._extend(session.branch())
                return
            current = by_id.get(parent_id)
        self._truncate(keep)
        new.reverse()
        self._extend(new)

    def _truncate(self, keep: int) -> None:
        if keep == len(self.entries):
            return
        for entry in self.entries[keep:]:
            self.position.pop(entry.id, None)
        del self.entries[keep:]
        del self.shown[bisect.bisect_left(self.shown, keep) :]
        self._effects = None
        self._branch_positions = None

    def _extend(self, added: list[StoredEntry]) -> None:
        known = len(self.entries)
        self.entries.extend(added)
        self.position.update(
            zip([entry.id for entry in added], range(known, known + len(added)), strict=True)
        )
        mentions_system = lines_containing(added, _SYSTEM_ROLE)
        types = [entry.type for entry in added]
        self.shown.extend(
            [
                index
                for index, entry_type in enumerate(types, known)
                if (entry_type == "message" and id(added[index - known]) not in mentions_system)
                or (entry_type in _MAYBE_SHOWN and shown_in_transcript(added[index - known]))
            ]
        )
        if CONTEXT_EDIT in types:
            self._has_context_edits = True  # stays set if the edit is left: only slower
        self._effects = None
        self._branch_positions = None

    def is_active(self, entry_id: Any) -> bool:
        index = self.position.get(entry_id)
        return index is not None and self.entries[index].id == entry_id

    def branch_positions(self, branch_points: set[Any]) -> list[int]:
        """The positions on the path of ``branch_points`` (entries with several children), in
        order."""
        cached = self._branch_positions
        if cached is not None and cached[0] == len(branch_points):
            return cached[1]  # the set only grows, and the path did not change
        position, entries = self.position, self.entries
        found = sorted(
            index
            for entry_id in branch_points
            if (index := position.get(entry_id)) is not None and entries[index].id == entry_id
        )
        self._branch_positions = (len(branch_points), found)
        return found

    @property
    def effects(self) -> Mapping[Any, ProjectedEntry]:
        """What context edits on the path did, by entry id (see ``context_edit_effects``)."""
        if not self._has_context_edits:
            return {}
        if self._effects is None:
            self._effects = context_edit_effects(self.entries)
        return self._effects


_indexes: weakref.WeakKeyDictionary[Session, ActivePathIndex] = weakref.WeakKeyDictionary()


def active_path_index(session: Session) -> ActivePathIndex:
    """The session's active-path index, caught up with its leaf."""
    index = _indexes.get(session)
    if index is None:
        index = _indexes[session] = ActivePathIndex()
    index.follow(session)
    return index
