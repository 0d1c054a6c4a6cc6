"""pi 1.6's system-role messages replayed into one: the prompt and tools in effect at a point.

pi 1.6 records its system prompt and tool declarations in the session as ``system`` messages: a
full one first, then patches (more content, sections replaced by name or deleted with ``null``,
tools added or removed by name). When pi 1.6 compacts, it stores the replayed result on the
compaction entry as ``systemMessage``, because the compaction hides the messages it replays.
pi-lsp does the same when it compacts a session that holds such messages, so pi 1.6 keeps its
prompt state across a compaction pi-lsp made (pi-ai's ``getCurrentSystemMessage``).

pi 1.6 also restores a session's tool loadout from these messages (``getCurrentTools``), and that
is how it records what its ``tool_search`` loaded. ``tools_declaration`` is the message pi-lsp
writes when its ``tool_search`` loads tools, so pi 1.6 declares them too when it continues.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pi_lsp.session.js_values import UNDEFINED
from pi_lsp.session.message_types import MessageRecord


def current_system_message(
    messages: Iterable[MessageRecord], timestamp: int
) -> dict[str, Any] | None:
    """The replay of every system message among ``messages``, stamped with ``timestamp`` (ms), or
    ``None`` when there is nothing to replay."""
    system_messages = [
        message
        for message in messages
        if isinstance(message, Mapping) and message.get("role") == "system"
    ]
    contents: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    first_timestamp: Any = UNDEFINED
    for message in system_messages:
        if first_timestamp is UNDEFINED or first_timestamp is None:
            first_timestamp = message.get("timestamp", UNDEFINED)
        text = _content_text(message.get("content"))
        if text:
            contents.append(text)
        patch = message.get("sections")
        for name, value in patch.items() if isinstance(patch, Mapping) else ():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in _tools(message.get("toolsRemoved")):
            tools.pop(_name(tool), None)
        for tool in _tools(message.get("toolsAdded")):
            tools[_name(tool)] = tool
    if first_timestamp is UNDEFINED and not tools:
        return None
    snapshot: dict[str, Any] = {"role": "system", "content": "\n\n".join(contents)}
    if sections:
        snapshot["sections"] = sections
    if tools:
        snapshot["toolsAdded"] = list(tools.values())
    snapshot["timestamp"] = timestamp
    return snapshot


def tools_declaration(
    messages: Iterable[MessageRecord], declared: list[Mapping[str, Any]], timestamp: int
) -> dict[str, Any] | None:
    """The system message declaring the tools of ``declared`` (``{name, description,
    parameters}``) that the system messages among ``messages`` do not declare, as pi 1.6's agent
    loop writes one before a request; ``None`` when there is none to declare.

    pi 1.6 takes a branch's declarations as its whole tool loadout once it has any, so a branch
    without them gets every declared tool, not only the new ones. Tools are only ever added: the
    tools pi recorded and pi-lsp does not have (its ``codemode``) stay pi's."""
    current = current_system_message(messages, timestamp)
    recorded = {_name(tool) for tool in _tools(current.get("toolsAdded") if current else None)}
    added = [dict(tool) for tool in declared if tool.get("name") not in recorded]
    if not added:
        return None
    return {"role": "system", "content": "", "toolsAdded": added, "timestamp": timestamp}


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _tools(value: Any) -> list[Mapping[str, Any]]:
    return [tool for tool in value if isinstance(tool, Mapping)] if isinstance(value, list) else []


def _name(tool: Mapping[str, Any]) -> Any:
    name = tool.get("name")
    return name if isinstance(name, (str, int, float, bool)) or name is None else repr(name)
