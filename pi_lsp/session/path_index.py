"""The active path of a session, indexed for views that show a window of it.

Editors ask many small questions about the root→leaf path of a big session: is this entry on it,
where, which entries the chat shows, what context edits did. Answering each by walking 100k
entries would cost what the session weighs, not what the screen shows. The index answers them
from one walk and follows the session as a turn appends to the leaf: only the new entries are
looked at. It is rebuilt when the leaf moved elsewhere (a navigation).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from pi_lsp.session.projection import CONTEXT_EDIT, ProjectedEntry, context_edit_effects
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import StoredEntry, lines_containing

SUMMARY_TYPES = ("compaction", "branch_summary")
_SYSTEM_ROLE = b'"role":"system"'


def shown_in_transcript(entry: StoredEntry, may_be_system: bool = True) -> bool:
    """Whether the chat view shows ``entry``: messages (but pi 1.6's system-role ones),
    compaction and branch summaries, and custom messages meant to be displayed.

    ``may_be_system`` False says the line never mentions a system role, so a message is decided
    without decoding it.
    """
    entry_type = entry.type
    if entry_type == "message":
        if not may_be_system:
            return True
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

    def follow(self, path: list[StoredEntry]) -> None:
        """Catch up with ``path`` (the session's active path now)."""
        known = len(self.entries)
        extends = known <= len(path) and (known == 0 or path[known - 1] is self.entries[-1])
        if not extends:
            self._reset()
            known = 0
        if known == len(path) and known:
            return
        added = path[known:]
        self.entries.extend(added)
        self.position.update(
            zip([entry.id for entry in added], range(known, len(path)), strict=True)
        )
        shown = self.shown
        mentions_system = lines_containing(added, _SYSTEM_ROLE)
        for index, entry in enumerate(added, known):
            if shown_in_transcript(entry, id(entry) in mentions_system):
                shown.append(index)
            elif entry.type == CONTEXT_EDIT:
                self._has_context_edits = True
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
    index.follow(session.active_path())
    return index
