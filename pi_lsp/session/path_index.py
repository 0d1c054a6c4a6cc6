"""The active path of a session, indexed for views that show a window of it.

Editors ask many small questions about the root→leaf path of a big session: is this entry on it,
where, which entries the chat shows, what context edits did. Answering each by walking 100k
entries would cost what the session weighs, not what the screen shows. The index follows the
session as a turn appends to the leaf: only the new entries are looked at; after a navigation,
only the entries between the old leaf and the new one.

Nothing is done for the whole path up front, so the first view after opening a session costs
what it shows. An entry's position is its depth: walking up from it reaches an entry whose depth
is known (every ``ANCHOR_SPACING``-th entry of the path, and each entry walked before), and it is
on the path when the path holds it at that depth. Which entries the chat shows is worked out the
first time the chat asks, from what the file's index read of each line (its type and its
message's role), never by decoding or searching the lines.
"""

from __future__ import annotations

import bisect
import operator
import weakref
from collections.abc import Mapping
from typing import Any, cast

from pi_lsp.session.js_values import is_truthy
from pi_lsp.session.paths import lookup
from pi_lsp.session.projection import CONTEXT_EDIT, ProjectedEntry, context_edit_effects
from pi_lsp.session.session import Session
from pi_lsp.session.stored_entry import MISSING, MessageHead, StoredEntry

SUMMARY_TYPES = ("compaction", "branch_summary")
ANCHOR_SPACING = 16
"""Every this many entries of the path, one whose position is recorded: finding an entry's
position walks up at most this far (plus the length of its own branch off the path)."""
_OFF_PATH = -1
"""The depth recorded for an entry whose walk up never met the path (another root, a cycle)."""
_type_of = operator.attrgetter("type")


def shown_in_transcript(entry: StoredEntry) -> bool:
    """Whether the chat view shows ``entry``: messages (but pi 1.6's system-role ones),
    compaction and branch summaries, and custom messages meant to be displayed. A message's role
    is read from the file's index (``message_head``), without decoding the entry."""
    entry_type = entry.type
    if entry_type == "message":
        head = entry.message_head
        return type(head) is MessageHead and head.role != "system"
    if entry_type in SUMMARY_TYPES:
        return True
    return entry_type == "custom_message" and entry.get("display") is not False


def _shown_positions(entries: list[StoredEntry], first: int) -> list[int]:
    """The positions (from ``first``) of the entries of ``entries`` the chat shows."""
    return [
        position
        for position, entry in enumerate(entries, first)
        if (
            type(head := entry.message_head) is MessageHead and head.role != "system"
            if entry.type == "message"  # most entries: decided here, without a call
            else shown_in_transcript(entry)
        )
    ]


class ActivePathIndex:
    """The active path's entries, their positions, and which of them the chat shows."""

    def __init__(self) -> None:
        self._by_id: dict[Any, StoredEntry] = {}
        self._session_has_context_edits = True
        """Whether the session has any context edit (as of the last ``follow``)."""
        self._reset()

    def _reset(self) -> None:
        self.entries: list[StoredEntry] = []
        self._depths: dict[int, int] = {}
        """``id()`` of an entry → its depth: its position if it is on the path (``_OFF_PATH``
        when its walk up met no entry of the path)."""
        self._shown: list[int] | None = None
        self._effects: dict[Any, ProjectedEntry] | None = None
        self._has_context_edits: bool | None = None
        self._branch_positions: tuple[int, list[int]] | None = None

    def follow(self, session: Session) -> None:
        """Catch up with the session's active path now.

        Walks up from the leaf only until it meets the path already indexed: a turn's appends
        cost the entries appended, a navigation the entries between the old and the new leaf.
        A damaged file (a parent cycle, an odd parent id) is indexed from the session's own walk.
        """
        entries, by_id = self.entries, session.by_id
        self._by_id = by_id
        self._session_has_context_edits = session.has_context_edits
        leaf = by_id.get(session.leaf_id) if session.leaf_id is not None else None
        if entries and entries[-1] is leaf:
            return
        if not entries:
            self._extend(session.branch())  # the first time: the session's own walk, cached
            return
        new: list[StoredEntry] = []
        current, keep = leaf, 0
        while current is not None:
            index = self.position_of_entry(current)
            if index is not None:
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
        entries = self.entries
        del entries[keep:]
        # Depths found since rest on positions that may be gone: keep only the anchors.
        self._depths = {id(entries[index]): index for index in range(0, keep, ANCHOR_SPACING)}
        if self._shown is not None:
            del self._shown[bisect.bisect_left(self._shown, keep) :]
        self._effects = None
        self._branch_positions = None

    def _extend(self, added: list[StoredEntry]) -> None:
        known = len(self.entries)
        if not known:
            self._depths = {}  # walks that met no path before it existed
        entries = self.entries
        entries.extend(added)
        depths = self._depths
        for index in range(
            -(-known // ANCHOR_SPACING) * ANCHOR_SPACING, len(entries), ANCHOR_SPACING
        ):
            depths[id(entries[index])] = index
        if self._shown is not None:
            self._shown.extend(_shown_positions(added, known))
        if (
            self._has_context_edits is False
            and self._session_has_context_edits
            and CONTEXT_EDIT in map(_type_of, added)
        ):
            self._has_context_edits = True  # stays set if the edit is left: only slower
        self._effects = None
        self._branch_positions = None

    @property
    def shown(self) -> list[int]:
        """Positions (in ``entries``) of the entries the chat shows, in path order; worked out
        the first time the chat asks (one pass over the path, on what opening read), then
        followed."""
        if self._shown is None:
            self._shown = _shown_positions(self.entries, 0)
        return self._shown

    def position_of(self, entry_id: Any) -> int | None:
        """The position on the path of the entry ``entry_id``; ``None`` when it is not on it."""
        entry = _stored_entry(self._by_id, entry_id)
        return None if entry is None else self.position_of_entry(entry)

    def position_of_entry(self, entry: StoredEntry) -> int | None:
        """The position of ``entry`` on the path; ``None`` when it is not on it."""
        depth = self._depths.get(id(entry))
        if depth is None:
            depth = self._walk_to_known_depth(entry)
        entries = self.entries
        return depth if 0 <= depth < len(entries) and entries[depth] is entry else None

    def _walk_to_known_depth(self, entry: StoredEntry) -> int:
        """Walk up from ``entry`` to an entry of known depth; record the depth of each entry
        walked, and return ``entry``'s."""
        depths, by_id = self._depths, self._by_id
        walked: list[StoredEntry] = []
        limit = len(by_id) + 1
        current: StoredEntry | None = entry
        base = _OFF_PATH
        while current is not None:
            known = depths.get(id(current))
            if known is not None:
                base = known
                break
            walked.append(current)
            if len(walked) > limit:
                break  # a cycle that never meets the path
            parent_id = current.parentId
            if type(parent_id) is str:
                current = by_id.get(parent_id) if parent_id else None
            else:  # an odd parent id: as the session's own walk reads it
                current = _stored_entry(by_id, parent_id) if is_truthy(parent_id) else None
        if base == _OFF_PATH:
            for off_path in walked:
                depths[id(off_path)] = _OFF_PATH
        else:
            for steps, below in enumerate(reversed(walked), 1):
                depths[id(below)] = base + steps
        return depths[id(entry)]

    def is_active(self, entry_id: Any) -> bool:
        return self.position_of(entry_id) is not None

    def branch_positions(self, branch_points: set[Any]) -> list[int]:
        """The positions on the path of ``branch_points`` (entries with several children), in
        order."""
        cached = self._branch_positions
        if cached is not None and cached[0] == len(branch_points):
            return cached[1]  # the set only grows, and the path did not change
        found = sorted(
            index for entry_id in branch_points if (index := self.position_of(entry_id)) is not None
        )
        self._branch_positions = (len(branch_points), found)
        return found

    @property
    def effects(self) -> Mapping[Any, ProjectedEntry]:
        """What context edits on the path did, by entry id (see ``context_edit_effects``)."""
        if self._has_context_edits is None:  # none in the session (most): none on the path
            self._has_context_edits = self._session_has_context_edits and CONTEXT_EDIT in map(
                _type_of, self.entries
            )
        if not self._has_context_edits:
            return {}
        if self._effects is None:
            self._effects = context_edit_effects(self.entries)
        return self._effects


def _stored_entry(by_id: dict[Any, StoredEntry], entry_id: Any) -> StoredEntry | None:
    """The session's entry ``entry_id`` (an odd id, like an object in a damaged line, finds
    nothing, as the session's own walk reads it)."""
    return cast("StoredEntry | None", lookup(by_id, entry_id))


_indexes: weakref.WeakKeyDictionary[Session, ActivePathIndex] = weakref.WeakKeyDictionary()


def active_path_index(session: Session) -> ActivePathIndex:
    """The session's active-path index, caught up with its leaf."""
    index = _indexes.get(session)
    if index is None:
        index = _indexes[session] = ActivePathIndex()
    index.follow(session)
    return index
