"""Extensions' hooks bound to an open session: its start, a turn's start and each tool result.

The context hook belongs to the context pipeline (``context_pipeline.py``); compaction's and
navigation's ``before_*`` hooks to the compactor and the navigator.
"""

from __future__ import annotations

import logging
from typing import Any

from pi_lsp.agent.context_edits import extension_editor
from pi_lsp.agent.runtime import SessionRuntime
from pi_lsp.extensions import (
    BeforeAgentStartEvent,
    ExtensionHost,
    SessionStartEvent,
    ToolResultEvent,
    run_before_agent_start,
    run_session_start,
    run_tool_result,
)
from pi_lsp.extensions.events import AppendEntry
from pi_lsp.session.message_types import ToolCall, UserMessage
from pi_lsp.tools.base import ToolResult

logger = logging.getLogger(__name__)


def session_appender(runtime: SessionRuntime) -> AppendEntry:
    """``event.append_entry``: a ``custom`` entry on ``runtime``'s session (writable ones only)."""

    def append_entry(custom_type: str, data: Any) -> str:
        runtime.require_writable()
        return runtime.session.append_custom(custom_type, data)

    return append_entry


async def start_session(runtime: SessionRuntime, extensions: ExtensionHost) -> None:
    """``session_start`` for every extension that has not seen this session yet (a reloaded
    extension is a new one), before the session's next turn."""
    unseen = [
        extension
        for extension in extensions.with_hook("session_start")
        if extension not in runtime.started_extensions
    ]
    if not unseen:
        return
    runtime.started_extensions.update(unseen)
    leaf_before = runtime.session.leaf_id
    event = SessionStartEvent(
        session_id=runtime.id,
        entries=[dict(entry) for entry in runtime.session.entries],
        append=session_appender(runtime),
    )
    await run_session_start(unseen, event, extensions.timings)
    if runtime.session.leaf_id != leaf_before:
        runtime.tree_changed()


async def turn_system_prompt(
    runtime: SessionRuntime,
    extensions: ExtensionHost,
    system_prompt: str,
    user_message: UserMessage,
) -> str:
    """``before_agent_start``: the system prompt of this turn."""
    hooked = extensions.with_hook("before_agent_start")
    if not hooked:
        return system_prompt
    content = user_message["content"]
    blocks = [] if isinstance(content, str) else content
    event = BeforeAgentStartEvent(
        session_id=runtime.id,
        prompt=content
        if isinstance(content, str)
        else "".join(block["text"] for block in blocks if block["type"] == "text"),
        images=[dict(block) for block in blocks if block["type"] == "image"],
        system_prompt=system_prompt,
        append=session_appender(runtime),
    )
    return await run_before_agent_start(hooked, event, extensions.timings)


async def changed_tool_result(
    runtime: SessionRuntime,
    extensions: ExtensionHost | None,
    call: ToolCall,
    result: ToolResult,
) -> ToolResult:
    """``tool_result``: the result as the session will store it and the model will see it."""
    hooked = extensions.with_hook("tool_result") if extensions is not None else []
    if not hooked:
        return result
    assert extensions is not None
    event = ToolResultEvent(
        session_id=runtime.id,
        tool_name=str(call.get("name")),
        tool_call_id=str(call.get("id")),
        input=dict(call.get("arguments") or {}),
        content=list(result.content),
        details=result.details,
        is_error=result.is_error,
        append=session_appender(runtime),
        edit=extension_editor(runtime),
    )
    change = await run_tool_result(hooked, event, extensions.timings)
    return ToolResult(content=change.content, details=change.details, is_error=change.is_error)
