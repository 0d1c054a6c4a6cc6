"""Walking a session's entry tree: root→leaf paths, entry ids and lookups, as pi's code walks them.

Entries are pi's entry objects (dicts, or any read-only mapping such as the store's lazily
decoded entries). ``by_id`` is anything with ``.get(entry_id)`` returning an entry or ``None``;
without it an index of ``entries`` is built. Parent links in a damaged file can form a cycle,
which pi would walk forever; here every walk stops at the first entry it has already visited.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeGuard, cast

from pi_lsp.session.js_values import UNDEFINED, is_truthy, strict_equals

if TYPE_CHECKING:
    from pi_lsp.session.stored_entry import StoredEntry

Entry = Mapping[str, Any]


class Unset(enum.Enum):
    """The type of ``UNSET``: no leaf was given (pi's ``leafId === undefined``)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
"""No leaf given: the context ends at the last entry. ``None`` means an explicit null leaf."""

LeafId = str | None | Literal[Unset.UNSET]
"""A leaf to build at: an entry id, ``None`` (an explicit null leaf: nothing) or ``UNSET`` (the
last entry, or the session's own leaf)."""


class EntryLookup(Protocol):
    """Finds an entry by id (a dict, or the store's lazy index)."""

    def get(self, entry_id: Any, /) -> Entry | None: ...


def index_entries(entries: Sequence[Entry]) -> dict[Any, Entry]:
    """Entries by id; a repeated id maps to its last entry, as pi's ``Map`` does."""
    index: dict[Any, Entry] = {}
    for entry in entries:
        entry_id = entry.get("id", UNDEFINED)
        try:
            index[entry_id] = entry
        except TypeError:
            continue  # An unhashable id (an object) can never be a parentId that finds it.
    return index


def walk_to_root(by_id: EntryLookup, start: Entry | None) -> list[Entry]:
    """``start`` and its ancestors via ``parentId``, root first, exactly as pi walks them; where pi
    would loop forever (a parent cycle), the walk stops before the first entry it meets again."""
    path = _walk_unguarded(by_id, start)
    if path is None:
        path = _walk_guarded(by_id, start)
    path.reverse()
    return path


def _walk_unguarded(by_id: EntryLookup, start: Entry | None) -> list[Entry] | None:
    """The fast walk: no bookkeeping, so ``None`` once it gets longer than the session (a cycle)."""
    limit = len(by_id) + 1 if isinstance(by_id, Mapping) else 0
    if not limit or start is None:
        return None
    indexed = is_indexed(start)
    path: list[Entry] = []
    # A StoredEntry (read by attribute when ``indexed``, decided once for speed) or a plain dict.
    current: Any = start
    while current is not None:
        path.append(current)
        parent_id = current.parentId if indexed else current.get("parentId", UNDEFINED)
        if type(parent_id) is str and parent_id:
            if len(path) > limit:
                return None  # longer than the session: a cycle, which the guarded walk handles
            current = by_id.get(parent_id)
        elif parent_id is None or parent_id is UNDEFINED or parent_id == "":
            break
        else:
            return None  # an odd parent id (a number, an object): the guarded walk decides
    return path


def _walk_guarded(by_id: EntryLookup, start: Entry | None) -> list[Entry]:
    path: list[Entry] = []
    visited: set[int] = set()
    current = start
    while current is not None and id(current) not in visited:
        visited.add(id(current))
        path.append(current)
        parent_id = current.parentId if is_indexed(current) else current.get("parentId", UNDEFINED)
        current = lookup(by_id, parent_id) if is_truthy(parent_id) else None
    return path


def _is_root_path(entries: Sequence[Entry]) -> bool:
    """Whether ``entries`` is exactly what walking up from its last entry would give: a chain of
    distinct string ids from a root, each entry the child of the one before."""
    ids = entry_ids(entries)
    if not ids or not all(type(entry_id) is str for entry_id in ids) or len(set(ids)) != len(ids):
        return False
    parents = _parent_ids(entries)
    return not is_truthy(parents[0]) and parents[1:] == ids[:-1]


def _parent_ids(entries: Sequence[Entry]) -> list[Any]:
    if entries and is_indexed(entries[0]):
        return [entry.parentId for entry in _as_indexed(entries)]
    return [entry.get("parentId", UNDEFINED) for entry in entries]


def is_indexed(entry: object) -> TypeGuard[StoredEntry]:
    """Whether an entry exposes ``type``, ``id`` and ``parentId`` as attributes (the store's entries
    do, with ``UNDEFINED`` for an absent field); plain dicts are read by key."""
    return entry is not None and hasattr(entry, "parentId")


def _as_indexed(entries: Sequence[Entry]) -> Sequence[StoredEntry]:
    """``entries`` once its first entry was found indexed (a path is all one kind or the other)."""
    return cast("Sequence[StoredEntry]", entries)


def entry_ids(entries: Sequence[Entry]) -> list[Any]:
    """The ``id`` of every entry (``UNDEFINED`` where absent), read cheaply from indexed entries."""
    if entries and is_indexed(entries[0]):
        return [entry.id for entry in _as_indexed(entries)]
    return [entry.get("id", UNDEFINED) for entry in entries]


def entry_types(entries: Sequence[Entry]) -> list[Any]:
    """The ``type`` of every entry, read cheaply from indexed entries."""
    if entries and is_indexed(entries[0]):
        return [entry.type for entry in _as_indexed(entries)]
    return [entry.get("type") for entry in entries]


def branch_path(by_id: EntryLookup, from_id: Any) -> list[Entry]:
    """pi's ``SessionManager.getBranch(fromId)``: root→entry path, empty when the id is unknown."""
    start = lookup(by_id, from_id) if is_truthy(from_id) else None
    return walk_to_root(by_id, start)


def session_path(
    entries: Sequence[Entry], leaf_id: object = UNSET, by_id: EntryLookup | None = None
) -> list[Entry]:
    """pi's ``buildSessionPath``: root→leaf; an unknown or missing leaf id means the last entry."""
    if leaf_id is None:
        return []
    if by_id is None and leaf_id is UNSET and _is_root_path(entries):
        return list(
            entries
        )  # already the root→leaf path (a branch handed back in): nothing to walk
    index = by_id if by_id is not None else index_entries(entries)
    leaf = lookup(index, leaf_id) if leaf_id is not UNSET and is_truthy(leaf_id) else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    return walk_to_root(index, leaf)


def first_index_with_id(ids: list[Any], wanted_id: Any, end: int) -> int:
    """The first index below ``end`` whose id is ``=== wanted_id``, else -1."""
    if type(wanted_id) is str:
        try:
            return ids.index(wanted_id, 0, end)
        except ValueError:
            return -1
    for index in range(end):
        if strict_equals(ids[index], wanted_id):
            return index
    return -1


def lookup(by_id: EntryLookup, entry_id: Any) -> Entry | None:
    try:
        return by_id.get(entry_id)
    except TypeError:
        return (
            None  # An object used as an id (a damaged line) finds nothing, as in a JavaScript Map.
        )


def entry_role(entry: Entry) -> Any:
    """A message entry's role, read from the store's index when the entry has one."""
    role = getattr(entry, "role", _NOT_FOUND)
    if role is _NOT_FOUND:
        message = entry.get("message")
        return message.get("role") if isinstance(message, Mapping) else None
    return role


_NOT_FOUND: Any = object()
