"""A session's title as ACP clients show it (``session_info_update``, ``session/list``).

The title is the session's name (``/name``), else the start of its first message, as
``session/list`` reports it; clients such as CodeCompanion set the chat's title from the update.
"""

from __future__ import annotations

from typing import Any

from acp.schema import SessionInfoUpdate

from pi_lsp.agent.runtime import SessionRuntime

TITLE_LENGTH = 80


def title_of(name: str | None, first_message: str) -> str | None:
    return name or first_message[:TITLE_LENGTH].strip() or None


def title_update(title: str) -> Any:
    return SessionInfoUpdate(session_update="session_info_update", title=title)


def first_prompt_title(runtime: SessionRuntime, text: str) -> str | None:
    """The title a session gets from this prompt: only its first, and only when unnamed."""
    if runtime.session.name is not None or _has_messages(runtime):
        return None
    return title_of(None, text)


def _has_messages(runtime: SessionRuntime) -> bool:
    # A session starts with settings entries; its first message comes early, so this stops soon.
    return any(entry.type == "message" for entry in runtime.session.entries)
