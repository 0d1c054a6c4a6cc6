"""Writing pi 1.6's ``context_edit`` entries: which entries can be edited, how a replacement is
normalized, and which edit gives an entry its original content back.

pi 1.6 (``SessionManager.appendContextEdit``) edits user, assistant and tool-result messages and
custom messages, only on the active branch; a string replacing an assistant or tool-result
message becomes one text block, since those roles hold block lists. pi has no "un-omit": the
latest edit of a target wins, so restoring an entry is one more edit whose replacement is the
entry's own stored content, which pi 1.6 reads back as the original message (roles, ids, tool
calls and metadata are the target's, only ``content`` comes from the edit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_lsp.errors import InvalidParamsError, echoed
from pi_lsp.session.projection import TEXT_BLOCK_ROLES

EDITABLE_MESSAGE_ROLES = ("user", "assistant", "toolResult")


def editable_role(entry: Mapping[str, Any]) -> str | None:
    """The role whose content an edit of ``entry`` changes (``custom`` for a custom message), or
    ``None`` when pi 1.6 refuses to edit such an entry."""
    if entry.get("type") == "custom_message":
        return "custom"
    if entry.get("type") == "message":
        message = entry.get("message")
        role = message.get("role") if isinstance(message, Mapping) else None
        if role in EDITABLE_MESSAGE_ROLES:
            return str(role)
    return None


def require_editable(entry: Mapping[str, Any]) -> str:
    """``editable_role`` of ``entry``, or InvalidParams naming what the entry is."""
    role = editable_role(entry)
    if role is None:
        raise InvalidParamsError(
            f"entry {echoed(entry.get('id'))} is a {_kind(entry)}, not a user, assistant, "
            "tool-result or custom message: it cannot be edited in the context"
        )
    return role


def replacement_for(role: str, replacement: str | None) -> dict | None:
    """The ``replacement`` field pi 1.6 writes for ``replacement`` text on a ``role`` message:
    ``None`` omits the message; text becomes one text block for block-list roles."""
    if replacement is None:
        return None
    if role in TEXT_BLOCK_ROLES:
        return {"content": [{"type": "text", "text": replacement}]}
    return {"content": replacement}


def original_content(entry: Mapping[str, Any]) -> dict:
    """The replacement that gives ``entry`` its stored content back (see the module docstring).

    A missing or null content (old files, hand edits) is read as pi 1.6 reads it: an empty
    block list.
    """
    source = entry.get("message") if entry.get("type") == "message" else entry
    content = source.get("content") if isinstance(source, Mapping) else None
    if not isinstance(content, (str, list)):
        content = []
    return {"content": content}


def _kind(entry: Mapping[str, Any]) -> str:
    if entry.get("type") == "message":
        message = entry.get("message")
        role = message.get("role") if isinstance(message, Mapping) else None
        return f"{role} message" if isinstance(role, str) else "message without a role"
    return f"{entry.get('type')} entry"
