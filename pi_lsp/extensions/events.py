"""What each hook receives: event objects with snake_case attributes (pi's payloads).

Hooks bound to a session (``session_start``, ``before_agent_start``, ``context``,
``tool_result``) can write the extension's own state to it with
``event.append_entry(custom_type, data)``: a ``custom`` entry, which pi keeps in the tree and
leaves out of the context. ``session_start`` hands those entries back after a restart. The
``context`` and ``tool_result`` hooks can also change what an earlier message gives the model from
the next request on, with ``event.edit_context(target_id, replacement)``: pi 1.6's ``context_edit``
entry (``replacement`` text, or None to leave the message out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

AppendEntry = Callable[[str, Any], str]
EditContext = Callable[[str, Any], str]


def _cannot_append(custom_type: str, data: Any) -> str:
    raise RuntimeError("this event is not bound to a session that can be written")


@attrs.frozen(kw_only=True)
class SessionEvent:
    session_id: str
    _append_entry: AppendEntry = attrs.field(default=_cannot_append, repr=False, alias="append")

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Write a ``custom`` entry (``customType``, ``data``) to the session; its id."""
        if not isinstance(custom_type, str) or not custom_type:
            raise ValueError("append_entry needs a non-empty custom_type")
        return self._append_entry(custom_type, data)


def _cannot_edit(target_id: str, replacement: Any) -> str:
    raise RuntimeError("this event cannot edit the context")


@attrs.frozen(kw_only=True)
class ContextEditingEvent(SessionEvent):
    """An event whose hook may edit the context of the requests that follow."""

    _edit_context: EditContext = attrs.field(default=_cannot_edit, repr=False, alias="edit")

    def edit_context(self, target_id: str, replacement: str | None) -> str:
        """Leave the message ``target_id`` out of the following requests (``replacement`` None)
        or replace its content with ``replacement``; the id of the ``context_edit`` entry. The
        message stays in the session file."""
        return self._edit_context(target_id, replacement)


@attrs.frozen(kw_only=True)
class SessionStartEvent(SessionEvent):
    """Before a session's first turn in this server (and again after the extension reloads)."""

    entries: list[dict[str, Any]]
    """Every entry of the session file, in file order (the ``custom`` ones included)."""


@attrs.frozen(kw_only=True)
class BeforeAgentStartEvent(SessionEvent):
    """Before a turn: the prompt as submitted (after ``/skill`` and template expansion)."""

    prompt: str
    images: list[dict[str, Any]]
    system_prompt: str
    """The system prompt of this turn so far (an earlier extension's change included)."""


@attrs.frozen(kw_only=True)
class ContextEvent(ContextEditingEvent):
    """Before every model request of a turn, tool rounds included."""

    messages: list[dict[str, Any]]
    """pi's AgentMessage JSON about to be converted for the provider (a copy: change it freely)."""
    entry_ids: list[str] = attrs.Factory(list)
    """The session entry each message comes from, in the same order (for ``edit_context``)."""


@attrs.frozen(kw_only=True)
class ToolResultEvent(ContextEditingEvent):
    """After a tool ran, before its result is stored and sent."""

    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    content: list[dict[str, Any]]
    details: Any
    is_error: bool


@attrs.frozen
class BeforeCompactEvent:
    """What an extension sees before a compaction (pi's ``session_before_compact`` payload)."""

    preparation: Any
    """The ``CompactionPreparation``: messages to summarize, the kept entry, file operations…"""
    branch_entries: list[dict]
    instructions: str | None
    reason: str
    """``manual``, ``threshold`` or ``overflow``."""
    will_retry: bool


@attrs.frozen(kw_only=True)
class BeforeTreeEvent:
    """Before ``pi/navigate`` moves the leaf (pi's ``session_before_tree``)."""

    session_id: str
    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[dict[str, Any]]
    """The entries of the branch being left that a summary would cover."""
    user_wants_summary: bool
    instructions: str | None
