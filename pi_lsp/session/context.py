"""What the LLM sees of a session: pi 0.84.2's ``buildSessionContext`` and its helpers.

The context is the root→leaf path through the entry tree. When that path holds a compaction, the
newest one stands in for everything before its ``firstKeptEntryId``. Thinking level and model are
the last ones set on the path (an assistant message counts as setting the model).

Entries are pi's entry objects (dicts, or any read-only mapping such as the store's lazily
decoded entries). ``by_id`` is anything with ``.get(entry_id)`` returning an entry or ``None``;
without it an index of ``entries`` is built. Parent links in a damaged file can form a cycle,
which pi would walk forever; here every walk stops at the first entry it has already visited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, cast

import attrs

from pi_lsp.session.js_values import UNDEFINED, is_truthy, strict_equals, without_undefined
from pi_lsp.session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)

if TYPE_CHECKING:
    from pi_lsp.session.stored_entry import StoredEntry

Entry = Mapping[str, Any]
Message = Mapping[str, Any]


class _UnsetType:
    """The type of ``UNSET``: no leaf was given (pi's ``leafId === undefined``)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _UnsetType()
"""No leaf given: the context ends at the last entry. ``None`` means an explicit null leaf."""


class EntryLookup(Protocol):
    """Finds an entry by id (a dict, or the store's lazy index)."""

    def get(self, entry_id: Any, /) -> Entry | None: ...


@attrs.frozen
class SessionContext:
    """The messages sent to the LLM, plus the thinking level and model in effect at the leaf."""

    messages: list[Message]
    thinking_level: Any = "off"  # normally a string; UNDEFINED if the last change entry lacked it
    model: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"messages", "thinkingLevel", "model"}`` as pi returns it."""
        return without_undefined(
            {
                "messages": list(self.messages),
                "thinkingLevel": self.thinking_level,
                "model": self.model,
            }
        )


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
    indexed = _is_indexed(start)
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
        parent_id = current.parentId if _is_indexed(current) else current.get("parentId", UNDEFINED)
        current = _lookup(by_id, parent_id) if is_truthy(parent_id) else None
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
    if entries and _is_indexed(entries[0]):
        return [entry.parentId for entry in _as_indexed(entries)]
    return [entry.get("parentId", UNDEFINED) for entry in entries]


def _is_indexed(entry: object) -> TypeGuard[StoredEntry]:
    """Whether an entry exposes ``type``, ``id`` and ``parentId`` as attributes (the store's entries
    do, with ``UNDEFINED`` for an absent field); plain dicts are read by key."""
    return entry is not None and hasattr(entry, "parentId")


def _as_indexed(entries: Sequence[Entry]) -> Sequence[StoredEntry]:
    """``entries`` once its first entry was found indexed (a path is all one kind or the other)."""
    return cast("Sequence[StoredEntry]", entries)


def entry_ids(entries: Sequence[Entry]) -> list[Any]:
    """The ``id`` of every entry (``UNDEFINED`` where absent), read cheaply from indexed entries."""
    if entries and _is_indexed(entries[0]):
        return [entry.id for entry in _as_indexed(entries)]
    return [entry.get("id", UNDEFINED) for entry in entries]


def _types(entries: Sequence[Entry]) -> list[Any]:
    if entries and _is_indexed(entries[0]):
        return [entry.type for entry in _as_indexed(entries)]
    return [entry.get("type") for entry in entries]


def branch_path(by_id: EntryLookup, from_id: Any) -> list[Entry]:
    """pi's ``SessionManager.getBranch(fromId)``: root→entry path, empty when the id is unknown."""
    start = _lookup(by_id, from_id) if is_truthy(from_id) else None
    return walk_to_root(by_id, start)


def session_path(
    entries: Sequence[Entry], leaf_id: Any = UNSET, by_id: EntryLookup | None = None
) -> list[Entry]:
    """pi's ``buildSessionPath``: root→leaf; an unknown or missing leaf id means the last entry."""
    if leaf_id is None:
        return []
    if by_id is None and leaf_id is UNSET and _is_root_path(entries):
        return list(
            entries
        )  # already the root→leaf path (a branch handed back in): nothing to walk
    index = by_id if by_id is not None else index_entries(entries)
    leaf = _lookup(index, leaf_id) if leaf_id is not UNSET and is_truthy(leaf_id) else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    return walk_to_root(index, leaf)


def build_context_entries(
    entries: Sequence[Entry], leaf_id: Any = UNSET, by_id: EntryLookup | None = None
) -> Sequence[Entry]:
    """The path with the newest compaction first, then the entries it kept, then those after it."""
    return _context_entries_of_path(session_path(entries, leaf_id, by_id))


def session_entry_to_context_messages(entry: Entry) -> list[Message]:
    """The messages one entry adds to the context (none for settings, labels, custom state)."""
    entry_type = entry.get("type", UNDEFINED)
    if entry_type == "message":
        message = entry.get("message", UNDEFINED)
        if not isinstance(message, Mapping):
            return []  # pi would throw on such a line; leaving it out keeps the session usable.
        # Old versions, forks and hand edits leave content null or missing; providers need a list.
        if (
            message.get("role") in ("user", "assistant", "toolResult")
            and message.get("content") is None
        ):
            return [{**message, "content": []}]
        return [message]
    if entry_type == "custom_message":
        content = entry.get("content")
        return [
            create_custom_message(
                entry.get("customType", UNDEFINED),
                [] if content is None else content,
                entry.get("display", UNDEFINED),
                entry.get("details", UNDEFINED),
                entry.get("timestamp", UNDEFINED),
            )
        ]
    if entry_type == "branch_summary" and is_truthy(entry.get("summary")):
        return [
            create_branch_summary_message(
                entry["summary"], entry.get("fromId", UNDEFINED), entry.get("timestamp", UNDEFINED)
            )
        ]
    if entry_type == "compaction":
        return [
            create_compaction_summary_message(
                entry.get("summary", UNDEFINED),
                entry.get("tokensBefore", UNDEFINED),
                entry.get("timestamp", UNDEFINED),
            )
        ]
    return []


def build_session_context(
    entries: Sequence[Entry], leaf_id: Any = UNSET, by_id: EntryLookup | None = None
) -> SessionContext:
    """pi's ``buildSessionContext``: the LLM messages, thinking level and model at the leaf."""
    return build_context_from_path(session_path(entries, leaf_id, by_id))


def build_context_from_path(path: Sequence[Entry]) -> SessionContext:
    """The context of a root→leaf ``path`` already walked (the store keeps its active path)."""
    thinking_level, model = _context_settings(path)
    messages = [
        message
        for entry in _context_entries_of_path(path)
        for message in session_entry_to_context_messages(entry)
    ]
    return SessionContext(messages=messages, thinking_level=thinking_level, model=model)


def _context_entries_of_path(path: Sequence[Entry]) -> Sequence[Entry]:
    types = _types(path)
    compaction_position = _last_index(types, "compaction")
    if compaction_position < 0:
        return path
    compaction = path[compaction_position]
    ids = entry_ids(path)
    compaction_index = first_index_with_id(ids, compaction.get("id", UNDEFINED), len(path))
    if compaction_index < 0:
        return path
    first_kept_index = first_index_with_id(
        ids, compaction.get("firstKeptEntryId", UNDEFINED), compaction_index
    )
    kept = path[first_kept_index:compaction_index] if first_kept_index >= 0 else []
    return [compaction, *kept, *path[compaction_index + 1 :]]


def _last_index(values: list[Any], wanted: Any) -> int:
    for index in range(len(values) - 1, -1, -1):
        if values[index] == wanted:
            return index
    return -1


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


def _context_settings(path: Sequence[Entry]) -> tuple[Any, dict[str, Any] | None]:
    """The last thinking level and model set on the path.

    pi scans the path forwards and keeps overwriting; scanning backwards and stopping at the first
    hit of each gives the same answer while leaving the bodies of older entries undecoded, which is
    what keeps a 100k-entry session fast.
    """
    thinking_level: Any = _NOT_FOUND
    model: Any = _NOT_FOUND
    for entry_type, entry in zip(reversed(_types(path)), reversed(path), strict=True):
        if entry_type == "thinking_level_change":
            if thinking_level is _NOT_FOUND:
                thinking_level = entry.get("thinkingLevel", UNDEFINED)
        elif model is not _NOT_FOUND:
            pass
        elif entry_type == "model_change":
            model = without_undefined(
                {
                    "provider": entry.get("provider", UNDEFINED),
                    "modelId": entry.get("modelId", UNDEFINED),
                }
            )
        elif entry_type == "message" and _role(entry) == "assistant":
            message = entry["message"]
            model = without_undefined(
                {
                    "provider": message.get("provider", UNDEFINED),
                    "modelId": message.get("model", UNDEFINED),
                }
            )
        if thinking_level is not _NOT_FOUND and model is not _NOT_FOUND:
            break
    return (
        "off" if thinking_level is _NOT_FOUND else thinking_level,
        None if model is _NOT_FOUND else model,
    )


def _role(entry: Entry) -> Any:
    """A message entry's role, read from the store's index when the entry has one."""
    role = getattr(entry, "role", _NOT_FOUND)
    if role is _NOT_FOUND:
        message = entry.get("message")
        return message.get("role") if isinstance(message, Mapping) else None
    return role


_NOT_FOUND: Any = object()


def _lookup(by_id: EntryLookup, entry_id: Any) -> Entry | None:
    try:
        return by_id.get(entry_id)
    except TypeError:
        return (
            None  # An object used as an id (a damaged line) finds nothing, as in a JavaScript Map.
        )
