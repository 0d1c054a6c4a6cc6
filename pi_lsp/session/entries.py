"""Session entries as pi 0.84.2 builds them: ids, the header, and one builder per entry type.

Every builder returns a plain dict whose key order is pi's (``JSON.stringify`` writes keys in
insertion order, so the order is part of the file format). Optional fields that pi leaves
``undefined`` are omitted. Entry types written by newer pi versions, or unknown ones, are never
built here; the store keeps them as they were read.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Container
from typing import Any

from pi_lsp.session.message_types import AgentMessage, MessageRecord

CURRENT_SESSION_VERSION = 3

ENTRY_TYPES = (
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
)
"""The entry types of pi 0.84.2's v3 format, the ones pi-lsp writes."""

NEWER_ENTRY_TYPES = ("usage", "context_edit")
"""Entry types pi 1.x adds to the v3 format, read as pi 1.6 reads them. pi-lsp writes only
``context_edit`` (forget, replace, restore), which pi 0.84.2 skips (it keeps the message)."""

KNOWN_ENTRY_TYPES = frozenset(ENTRY_TYPES + NEWER_ENTRY_TYPES)
"""Every entry type pi-lsp understands. Lines of other types (from a later pi) stay in the file and
the tree, byte for byte, and add nothing to the context."""

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


def new_entry_id(existing_ids: Container[str]) -> str:
    """Eight hex characters not yet used in the session, as pi's ``generateId`` makes them."""
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in existing_ids:
            return candidate
    return new_session_id()


def new_session_id() -> str:
    """A UUID version 7 (time-ordered), as pi 0.84.2 uses for session ids."""
    unix_ms = time.time_ns() // 1_000_000
    random_bits = int.from_bytes(os.urandom(10), "big")
    value = (unix_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((random_bits >> 68) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= random_bits & ((1 << 62) - 1)
    hex_digits = f"{value:032x}"
    return "-".join(
        (hex_digits[:8], hex_digits[8:12], hex_digits[12:16], hex_digits[16:20], hex_digits[20:])
    )


def header(session_id: str, timestamp: str, cwd: str, parent_session: str | None = None) -> dict:
    """The first line of a session file."""
    entry: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        entry["parentSession"] = parent_session
    return entry


def message(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    agent_message: AgentMessage | MessageRecord,
) -> dict:
    """A ``message`` entry wrapping one AgentMessage (user,
    assistant, toolResult, bashExecution, custom)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "message": agent_message,
    }


def thinking_level_change(
    entry_id: str, parent_id: str | None, timestamp: str, thinking_level: str
) -> dict:
    return {
        "type": "thinking_level_change",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "thinkingLevel": thinking_level,
    }


def model_change(
    entry_id: str, parent_id: str | None, timestamp: str, provider: str, model_id: str
) -> dict:
    return {
        "type": "model_change",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "provider": provider,
        "modelId": model_id,
    }


def compaction(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    details: Any = None,
    usage: dict | None = None,
    from_hook: bool | None = None,
    system_message: dict | None = None,
) -> dict:
    """A compaction; ``system_message`` is pi 1.6's snapshot of the prompt state it hides (pi
    0.84.2 ignores the field)."""
    entry = {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "summary": summary,
        "firstKeptEntryId": first_kept_entry_id,
        "tokensBefore": tokens_before,
    }
    _put_optional(
        entry, details=details, usage=usage, fromHook=from_hook, systemMessage=system_message
    )
    return entry


def branch_summary(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    from_id: str,
    summary: str,
    details: Any = None,
    usage: dict | None = None,
    from_hook: bool | None = None,
) -> dict:
    entry = {
        "type": "branch_summary",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "fromId": from_id,
        "summary": summary,
    }
    _put_optional(entry, details=details, usage=usage, fromHook=from_hook)
    return entry


def custom(
    entry_id: str, parent_id: str | None, timestamp: str, custom_type: str, data: Any = None
) -> dict:
    """Extension or editor state; never part of the LLM context. pi puts ``customType`` first."""
    entry: dict[str, Any] = {"type": "custom", "customType": custom_type}
    _put_optional(entry, data=data)
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def custom_message(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    custom_type: str,
    content: str | list,
    display: bool,
    details: Any = None,
) -> dict:
    """An injected message that is part of the LLM context (as a user message)."""
    entry: dict[str, Any] = {
        "type": "custom_message",
        "customType": custom_type,
        "content": content,
        "display": display,
    }
    _put_optional(entry, details=details)
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def label(
    entry_id: str, parent_id: str | None, timestamp: str, target_id: str, label_text: str | None
) -> dict:
    """A bookmark on ``target_id``; an empty or missing label clears it."""
    entry = {
        "type": "label",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "targetId": target_id,
    }
    _put_optional(entry, label=label_text)
    return entry


def context_edit(
    entry_id: str, parent_id: str | None, timestamp: str, target_id: str, replacement: dict | None
) -> dict:
    """pi 1.6's edit of one earlier entry's part of the context: ``replacement`` null leaves the
    target out of future context, ``{"content": ...}`` replaces its content. Key order is pi's
    ``appendContextEdit``."""
    return {
        "type": "context_edit",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "targetId": target_id,
        "replacement": replacement,
    }


def session_info(entry_id: str, parent_id: str | None, timestamp: str, name: str) -> dict:
    """The session's display name; line breaks become spaces and the name is trimmed, as in pi."""
    return {
        "type": "session_info",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "name": re.sub(r"[\r\n]+", " ", name).strip(),
    }


def _put_optional(entry: dict, **fields: Any) -> None:
    for key, value in fields.items():
        if value is not None:
            entry[key] = value
