"""What each entry of a path gives the LLM: pi 1.6's ``buildSessionProjection``.

The context of a root→leaf path is built from the newest compaction on it (its summary, preceded
by its ``systemMessage`` snapshot when it has one), the entries it kept (from ``firstKeptEntryId``
up to the compaction, leaving out system-role messages, which the snapshot replaces) and every
entry after it. Then each ``context_edit`` among those entries changes what its target gives: the
latest edit per target wins, ``replacement: null`` leaves the target out, ``{content}`` replaces
its content. An older compaction inside the kept range gives nothing (its summary is already part
of the newer one). Entries of kinds pi-lsp does not know give nothing.

On files without pi 1.x entries this is pi 0.84.2's context, but for the older compaction (pi 1.6
fixed that repetition). The projection keeps, per entry, what it contributes, so planning, the
chat transcript and the tree can tell which entries a context edit removed or replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.protocol import ContextEditEffect
from pi_lsp.session.js_values import UNDEFINED, is_truthy
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.messages import (
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from pi_lsp.session.paths import entry_ids, entry_role, entry_types, first_index_with_id

Entry = Mapping[str, Any]

CONTEXT_EDIT = "context_edit"
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
"""Roles whose ``content`` a replacing context edit swaps; other messages of the target stay."""
TEXT_BLOCK_ROLES = frozenset({"assistant", "toolResult"})
"""Roles whose content is always a block list: a string replacement becomes one text block."""


@attrs.frozen
class ProjectedEntry:
    """One entry of the context path and the messages it gives after context edits."""

    entry: Entry
    messages: list[MessageRecord]
    edit: Entry | None = None
    """The ``context_edit`` that applies to this entry (the latest one on the path), if any."""

    @property
    def removed(self) -> bool:
        """A context edit left out everything this entry would give."""
        return self.edit is not None and not self.messages and bool(entry_messages(self.entry))

    @property
    def replaced(self) -> bool:
        """A context edit replaced this entry's content with other content (an edit giving the
        stored content back, as a restore does, changes nothing)."""
        return (
            self.edit is not None
            and is_replacement(self.edit.get("replacement", UNDEFINED))
            and self.messages != entry_messages(self.entry)
        )


def entry_messages(entry: Entry) -> list[MessageRecord]:
    """pi 1.6's ``sessionEntryToContextMessages``: the messages one entry adds to the context.

    Settings, labels, names, custom state, usage records, context edits and kinds pi-lsp does not
    know add none.
    """
    entry_type = entry.get("type", UNDEFINED)
    if entry_type == "message":
        message = entry.get("message", UNDEFINED)
        if not isinstance(message, Mapping):
            return []  # pi would throw on such a line; leaving it out keeps the session usable.
        # Old versions, forks and hand edits leave content null or missing.
        if message.get("content") is None:
            role = message.get("role")
            if role == "system":
                return [{**message, "content": ""}]
            if role in ("user", "assistant", "toolResult"):
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
        summary = create_compaction_summary_message(
            entry.get("summary", UNDEFINED),
            entry.get("tokensBefore", UNDEFINED),
            entry.get("timestamp", UNDEFINED),
        )
        snapshot = entry.get("systemMessage", UNDEFINED)
        # pi emits any truthy value here; a snapshot that is not an object (a damaged line) is
        # left out, as it could not be a message.
        return [snapshot, summary] if isinstance(snapshot, Mapping) else [summary]
    return []


def context_entries(path: Sequence[Entry]) -> Sequence[Entry]:
    """pi's ``buildContextEntries``: the newest compaction, the entries it kept, those after it."""
    compaction_position = _last_index(entry_types(path), "compaction")
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
    if kept and "message" in entry_types(kept):
        # The compaction's systemMessage snapshot stands for the prompt state recorded before it.
        kept = [entry for entry in kept if not _is_system_message(entry)]
    return [compaction, *kept, *path[compaction_index + 1 :]]


def project_path(path: Sequence[Entry]) -> list[ProjectedEntry]:
    """Every entry of ``context_entries(path)`` with the messages it gives after context edits."""
    entries = context_entries(path)
    types = entry_types(entries)
    edits = latest_edits(entries, types)
    projected = []
    for index, (entry_type, entry) in enumerate(zip(types, entries, strict=True)):
        edit = edit_of(edits, entry)
        if index > 0 and entry_type == "compaction":
            # Only the newest compaction (first) projects; an older one kept in its range is
            # already summarized by it.
            projected.append(ProjectedEntry(entry, [], edit))
        else:
            projected.append(ProjectedEntry(entry, project_entry(entry, edit), edit))
    return projected


def context_messages(path: Sequence[Entry]) -> list[MessageRecord]:
    """The messages of ``project_path(path)``, flattened: the context the LLM gets.

    Built without the per-entry records, since a long session rebuilds it on every turn.
    """
    entries = context_entries(path)
    types = entry_types(entries)
    edits = latest_edits(entries, types)
    messages: list[MessageRecord] = []
    for index, (entry_type, entry) in enumerate(zip(types, entries, strict=True)):
        if entry_type not in _CONTEXT_TYPES or (index > 0 and entry_type == "compaction"):
            continue  # gives nothing (settings, labels, usage, edits, unknown kinds)
        if edits:
            messages.extend(project_entry(entry, edit_of(edits, entry)))
        else:
            messages.extend(entry_messages(entry))
    return messages


_CONTEXT_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
"""The entry types that can give messages (``entry_messages`` returns nothing for the others)."""


def context_edit_effects(path: Sequence[Entry]) -> dict[Any, ProjectedEntry]:
    """The entries of ``path`` whose part of the context a context edit changed, by id: each
    projected entry says whether it was ``removed`` or ``replaced`` and what it gives now."""
    if CONTEXT_EDIT not in entry_types(path):
        return {}
    return {
        projected.entry.get("id"): projected
        for projected in project_path(path)
        if projected.edit is not None and (projected.removed or projected.replaced)
    }


def effect_name(projected: ProjectedEntry) -> ContextEditEffect:
    """``"removed"`` or ``"replaced"``: the wire value of ``contextEdit``."""
    return "removed" if projected.removed else "replaced"


def edits_on_path(path: Sequence[Entry]) -> Callable[[Entry], Entry | None]:
    """The context edit that applies to an entry at the end of ``path`` (``None``: none does).

    Only edits that are part of the context count: an edit summarized away by a later compaction
    no longer changes anything.
    """
    edits = latest_edits(context_entries(path))
    if not edits:
        return lambda entry: None
    return lambda entry: edit_of(edits, entry)


def project_entry(entry: Entry, edit: Entry | None) -> list[MessageRecord]:
    """pi 1.6's ``projectContextEntry``: the entry's messages with ``edit`` applied.

    An edit without a ``replacement`` field (pi itself would stop with a TypeError on it) changes
    nothing.
    """
    messages = entry_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement", UNDEFINED)
    if replacement is None:
        return []
    if replacement is UNDEFINED:
        return messages
    content = (
        replacement.get("content", UNDEFINED) if isinstance(replacement, Mapping) else UNDEFINED
    )
    return [_with_content(message, content) for message in messages]


def latest_edits(entries: Sequence[Entry], types: Sequence[Any] | None = None) -> dict[Any, Entry]:
    """The last ``context_edit`` per target among ``entries`` (keys from ``_id_key``); ``types``
    are the entries' types when the caller has them already."""
    types = entry_types(entries) if types is None else types
    if CONTEXT_EDIT not in types:
        return {}
    edits: dict[Any, Entry] = {}
    for entry_type, entry in zip(types, entries, strict=True):
        if entry_type == CONTEXT_EDIT:
            key = _id_key(entry.get("targetId", UNDEFINED))
            if key is not None:
                edits[key] = entry
    return edits


def edit_of(edits: Mapping[Any, Entry], entry: Entry) -> Entry | None:
    """The edit of ``entry`` in a ``latest_edits`` result."""
    return edits.get(_id_key(entry.get("id", UNDEFINED))) if edits else None


def is_replacement(replacement: Any) -> bool:
    """Whether a context edit's ``replacement`` replaces content (no omission, nor malformed)."""
    return replacement is not None and replacement is not UNDEFINED


def _with_content(message: MessageRecord, content: Any) -> MessageRecord:
    role = message.get("role")
    if role not in EDITABLE_ROLES:
        return message
    if role in TEXT_BLOCK_ROLES and isinstance(content, str):
        content = [{"type": "text", "text": content}]
    replaced = {**message, "content": content}
    if content is UNDEFINED:
        del replaced["content"]  # JSON.stringify drops an undefined field
    return replaced


def _is_system_message(entry: Entry) -> bool:
    return entry.get("type") == "message" and entry_role(entry) == "system"


def _last_index(values: list[Any], wanted: Any) -> int:
    for index in range(len(values) - 1, -1, -1):
        if values[index] == wanted:
            return index
    return -1


def _id_key(value: Any) -> Any:
    """A dict key that matches ids as a JavaScript ``Map`` does (``1`` and ``1.0`` alike, ``1`` and
    ``"1"`` or ``true`` apart); ``None`` for objects, which no id can equal."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    if value is None or value is UNDEFINED:
        return ("nullish", value is None)
    return None
