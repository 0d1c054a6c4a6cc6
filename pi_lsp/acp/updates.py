"""pi's agent events and saved messages as ACP ``session/update`` notifications (pure mapping).

The same ``protocol.py`` events the LSP front end sends as ``pi/event`` become ACP updates here:
text and reasoning deltas become message and thought chunks, a tool execution becomes a
``tool_call`` (with its ``kind``, ``locations`` and ``rawInput``) and ``tool_call_update``s (the
output as it arrives, then the final status and content; a command run in the client's terminal
shows as that terminal). ``write`` and ``edit`` are announced with their change as diffs, and
since ``content`` in a ``tool_call_update`` replaces the tool call's content (ACP v1), every
update of theirs carries the diffs again before the result, live and in replays.
Compactions and branch summaries are shown as agent messages carrying their card in markdown
(``summary_cards.py``), live and in replays; a failed or cancelled one says nothing changed.
``replay`` turns the active path of a session (its transcript) into the same updates, for
``session/load``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acp import (
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.helpers import start_tool_call
from acp.schema import ImageContentBlock, StopReason, TerminalToolCallContent, ToolCallLocation

from pi_lsp.acp.summary_cards import card_markdown, failed_markdown
from pi_lsp.acp.tool_titles import card_title
from pi_lsp.protocol import (
    BranchSummaryEndEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    Event,
    RetryEvent,
    SummaryCard,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCard,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TranscriptEntry,
)

TOOL_KINDS = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}
"""The ACP ``kind`` of each of pi's tools (a client picks its icon and grouping by it)."""

STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "toolUse": "end_turn",
    "error": "end_turn",
    "length": "max_tokens",
    "aborted": "cancelled",
    "refusal": "refusal",
    "content_filter": "refusal",
}
"""pi's ``stopReason`` of a turn's last answer as ACP's ``stopReason`` of ``session/prompt``."""


def stop_reason(pi_stop_reason: str) -> StopReason:
    return STOP_REASONS.get(pi_stop_reason, "end_turn")


RunningDiffs = dict[str, list[Any]]
"""Tool call id → the diffs a running ``write``/``edit`` of one session was announced with."""


def event_updates(event: Event, cwd: Path, running: RunningDiffs | None = None) -> list[Any]:
    """The ACP updates one (already coalesced) pi event becomes; most events become none.

    ``running`` holds the session's running tool calls' diffs: kept at the start, repeated in
    each update, forgotten at the end."""
    running = {} if running is None else running
    if isinstance(event, TextDeltaEvent):
        return [update_agent_message_text(event.delta)]
    if isinstance(event, ThinkingDeltaEvent):
        return [update_agent_thought_text(event.delta)]
    if isinstance(event, ToolExecutionStartEvent):
        start = tool_call_start(event.tool_call_id, event.name, event.arguments, cwd)
        if start.content:
            running[event.tool_call_id] = list(start.content)
        return [start]
    if isinstance(event, ToolExecutionUpdateEvent):
        return [
            update_tool_call(
                event.tool_call_id,
                status="in_progress",
                content=running.get(event.tool_call_id, [])
                + (_terminal(event.details) or _content(event.content)),
            )
        ]
    if isinstance(event, ToolExecutionEndEvent):
        return [
            update_tool_call(
                event.tool_call_id,
                title=card_title(event.tool_card) if event.tool_card else None,
                status="failed" if event.is_error else "completed",
                content=running.pop(event.tool_call_id, [])
                + (_terminal(event.details) or _content(event.content)),
            )
        ]
    if isinstance(event, CompactionStartEvent):
        return [update_agent_message_text(f"\n\n_Compacting the context ({event.reason})…_\n\n")]
    if isinstance(event, CompactionEndEvent | BranchSummaryEndEvent):
        return _summary_end(event, cwd)
    if isinstance(event, RetryEvent):
        return [
            update_agent_thought_text(
                f"{event.error_message}; retrying in {event.delay_ms / 1000:.1f}s "
                f"({event.attempt}/{event.max_attempts})\n"
            )
        ]
    return []


def _summary_end(event: CompactionEndEvent | BranchSummaryEndEvent, cwd: Path) -> list[Any]:
    """A finished compaction or branch summary: its card, or why it failed and what stayed."""
    if isinstance(event, CompactionEndEvent):
        entry_type, what, unchanged = "compaction", "Compaction", "the session is unchanged"
        reason = event.reason
    else:
        entry_type, what, unchanged = "branch_summary", "Branch summary", "the leaf did not move"
        reason = None
    if event.aborted or event.error_message:
        text = failed_markdown(what, event.error_message, event.aborted, unchanged)
        return [update_agent_message_text(text)]
    if event.card is None:
        return []
    return [update_agent_message_text(card_markdown(entry_type, event.card, cwd, reason))]


def tool_call_start(tool_call_id: str, name: str, arguments: dict[str, Any], cwd: Path) -> Any:
    """The ``tool_call`` announcing a tool that starts running."""
    path = _absolute_path(arguments.get("path"), cwd)
    return start_tool_call(
        tool_call_id,
        _title(name, arguments),
        kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
        status="in_progress",
        locations=[ToolCallLocation(path=path)] if path else None,
        raw_input=arguments,
        content=_diffs(name, arguments, path) or None,
    )


def replay(items: Iterable[TranscriptEntry], cwd: Path) -> list[Any]:
    """The updates that show a saved conversation (the active path) as it happened."""
    updates: list[Any] = []
    tool_calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for item in items:
        card = _card(item)
        if card is not None:
            updates.append(update_agent_message_text(card_markdown(item.type, card, cwd)))
        elif item.message is not None:
            updates.extend(_message_updates(item.message, tool_calls, cwd, item.tool_card))
    return updates


def _card(item: TranscriptEntry) -> SummaryCard | None:
    """A summary entry's card (one of the summary alone when the transcript gave none)."""
    if item.type not in ("compaction", "branch_summary"):
        return None
    if item.card is not None:
        return item.card
    return SummaryCard(item.summary, [], []) if item.summary else None


def _message_updates(
    message: dict[str, Any],
    tool_calls: dict[str, tuple[str, dict[str, Any]]],
    cwd: Path,
    tool_card: ToolCard | None = None,
) -> list[Any]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        if isinstance(content, str):
            return [update_user_message_text(content)]
        return [update_user_message(block) for block in _blocks(content)]
    if role == "assistant":
        return _assistant_updates(content if isinstance(content, list) else [], tool_calls, cwd)
    if role == "toolResult":
        call_id = str(message.get("toolCallId", ""))
        name, arguments = tool_calls.get(call_id, ("", {}))
        diffs = _diffs(name, arguments, _absolute_path(arguments.get("path"), cwd))
        return [
            update_tool_call(
                call_id,
                title=card_title(tool_card) if tool_card else None,
                status="failed" if message.get("isError") else "completed",
                content=diffs + _content(content if isinstance(content, list) else []),
            )
        ]
    return []


def _assistant_updates(
    content: list[Any], tool_calls: dict[str, tuple[str, dict[str, Any]]], cwd: Path
) -> list[Any]:
    updates: list[Any] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            updates.append(update_agent_message_text(part["text"]))
        elif part.get("type") == "thinking" and part.get("thinking"):
            updates.append(update_agent_thought_text(part["thinking"]))
        elif part.get("type") == "toolCall":
            call_id, name = str(part.get("id", "")), str(part.get("name", ""))
            given = part.get("arguments")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            tool_calls[call_id] = (name, arguments)
            updates.append(tool_call_start(call_id, name, arguments, cwd))
    return updates


def _blocks(content: Any) -> list[Any]:
    blocks: list[Any] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append(text_block(str(part.get("text", ""))))
        elif part.get("type") == "image":
            blocks.append(
                ImageContentBlock(
                    type="image",
                    data=str(part.get("data", "")),
                    mime_type=str(part.get("mimeType", "")),
                )
            )
    return blocks


def _terminal(details: Any) -> list[Any]:
    """A command run in the client's terminal is shown as that terminal (it stays on screen
    after the command ends)."""
    terminal_id = details.get("terminalId") if isinstance(details, dict) else None
    if not isinstance(terminal_id, str):
        return []
    return [TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]


def text_content(text: str) -> Any:
    """A text block as tool call content."""
    return tool_content(text_block(text))


def _content(content: list[Any]) -> list[Any]:
    return [tool_content(block) for block in _blocks(content)]


def _diffs(name: str, arguments: dict[str, Any], path: str | None) -> list[Any]:
    """``write`` and ``edit`` shown as diffs (an edit's replacements, a write's new text)."""
    if path is None:
        return []
    if name == "write" and isinstance(arguments.get("content"), str):
        return [tool_diff_content(path, arguments["content"])]
    if name != "edit":
        return []
    edits = arguments.get("edits")
    if not isinstance(edits, list):
        edits = [arguments]
    return [
        tool_diff_content(path, edit["newText"], edit["oldText"])
        for edit in edits
        if isinstance(edit, dict)
        and isinstance(edit.get("oldText"), str)
        and isinstance(edit.get("newText"), str)
    ]


def _absolute_path(path: Any, cwd: Path) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    expanded = Path(path).expanduser()
    return str(expanded if expanded.is_absolute() else cwd / expanded)


def _title(name: str, arguments: dict[str, Any]) -> str:
    detail = arguments.get("command") or arguments.get("path") or arguments.get("pattern")
    return f"{name} {detail}" if isinstance(detail, str) and detail else name
