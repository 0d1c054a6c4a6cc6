"""What the LLM sees of a session: pi's ``buildSessionContext`` and its helpers.

The context is the root→leaf path through the entry tree, projected as pi 1.6 projects it
(``projection``): the newest compaction stands in for everything before its ``firstKeptEntryId``,
and context edits leave out or replace the entries they target. Thinking level and model are the
last ones set on the path (an assistant message counts as setting the model). On files without pi
1.x entries this is pi 0.84.2's context (but for one fix of pi 1.6: an older compaction inside the
newest one's kept part gives nothing).

The path walks live in ``paths``; their names are re-exported here for the modules that build on
the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from pi_lsp.session.js_values import UNDEFINED, without_undefined
from pi_lsp.session.message_types import MessageRecord
from pi_lsp.session.paths import (
    UNSET,
    EntryLookup,
    LeafId,
    branch_path,
    entry_ids,
    entry_role,
    entry_types,
    first_index_with_id,
    index_entries,
    session_path,
    walk_to_root,
)
from pi_lsp.session.projection import (
    ProjectedEntry,
    context_entries,
    context_messages,
    entry_messages,
    project_path,
)

__all__ = [
    "UNSET",
    "EntryLookup",
    "LeafId",
    "ProjectedEntry",
    "SessionContext",
    "branch_path",
    "build_context_entries",
    "build_context_from_path",
    "build_session_context",
    "entry_ids",
    "first_index_with_id",
    "index_entries",
    "project_session",
    "session_entry_to_context_messages",
    "session_path",
    "walk_to_root",
]

Entry = Mapping[str, Any]

session_entry_to_context_messages = entry_messages
"""pi's name for ``projection.entry_messages``."""


@attrs.frozen
class SessionContext:
    """The messages sent to the LLM, plus the thinking level and model in effect at the leaf."""

    messages: list[MessageRecord]
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


def build_context_entries(
    entries: Sequence[Entry], leaf_id: object = UNSET, by_id: EntryLookup | None = None
) -> Sequence[Entry]:
    """The path with the newest compaction first, then the entries it kept, then those after it."""
    return context_entries(session_path(entries, leaf_id, by_id))


def build_session_context(
    entries: Sequence[Entry], leaf_id: object = UNSET, by_id: EntryLookup | None = None
) -> SessionContext:
    """pi's ``buildSessionContext``: the LLM messages, thinking level and model at the leaf."""
    return build_context_from_path(session_path(entries, leaf_id, by_id))


def project_session(
    entries: Sequence[Entry], leaf_id: object = UNSET, by_id: EntryLookup | None = None
) -> list[ProjectedEntry]:
    """pi 1.6's ``buildSessionProjection`` entries: what each context entry gives at the leaf."""
    return project_path(session_path(entries, leaf_id, by_id))


def build_context_from_path(path: Sequence[Entry]) -> SessionContext:
    """The context of a root→leaf ``path`` already walked (the store keeps its active path)."""
    thinking_level, model = context_settings(path)
    return SessionContext(
        messages=context_messages(path), thinking_level=thinking_level, model=model
    )


def context_settings(path: Sequence[Entry]) -> tuple[Any, dict[str, Any] | None]:
    """The last thinking level and model set on the path.

    pi scans the path forwards and keeps overwriting; scanning backwards and stopping at the first
    hit of each gives the same answer while leaving the bodies of older entries undecoded, which is
    what keeps a 100k-entry session fast.
    """
    thinking_level: Any = _NOT_FOUND
    model: Any = _NOT_FOUND
    for entry_type, entry in zip(reversed(entry_types(path)), reversed(path), strict=True):
        if entry_type == "thinking_level_change":
            if thinking_level is _NOT_FOUND:
                thinking_level = entry.get("thinkingLevel", UNDEFINED)
        elif model is _NOT_FOUND:
            found = model_set_by(entry_type, entry)
            if found is not None:  # {} too: a change that names nothing still sets it
                model = found
        if thinking_level is not _NOT_FOUND and model is not _NOT_FOUND:
            break
    return (
        "off" if thinking_level is _NOT_FOUND else thinking_level,
        None if model is _NOT_FOUND else model,
    )


def model_set_by(entry_type: Any, entry: Entry) -> dict[str, Any] | None:
    """The model an entry of ``entry_type`` sets: a model change's, or the model an assistant
    message came from (an answer counts as setting it); None for any other entry."""
    if entry_type == "model_change":
        return without_undefined(
            {
                "provider": entry.get("provider", UNDEFINED),
                "modelId": entry.get("modelId", UNDEFINED),
            }
        )
    if entry_type == "message" and entry_role(entry) == "assistant":
        message = entry["message"]
        return without_undefined(
            {
                "provider": message.get("provider", UNDEFINED),
                "modelId": message.get("model", UNDEFINED),
            }
        )
    return None


_NOT_FOUND: Any = object()
