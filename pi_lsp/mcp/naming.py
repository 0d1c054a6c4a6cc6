"""The names models see for MCP tools, exactly as pi 1.6 (``pi-mcp``'s ``naming.js``) makes them,
so a session moves between pi and pi-lsp with its tool calls intact."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

MAX_TOOL_NAME_LENGTH = 64
"""Providers accept tool names of at most 64 characters of ``[A-Za-z0-9_-]``."""
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


def mcp_tool_name(server: str, tool: str, is_taken: Callable[[str], bool] = lambda _: False) -> str:
    """``mcp__<server>__<tool>`` with every other character as ``_``; too long, or taken by
    another tool of the server once sanitized, it ends in an 8-digit hash of server and tool."""
    # JavaScript replaces UTF-16 code units: a character beyond the BMP becomes two ``_``.
    name = _NOT_IDENTIFIER.sub(
        lambda match: "__" if ord(match[0]) > 0xFFFF else "_", f"mcp__{server}__{tool}"
    )
    if len(name) <= MAX_TOOL_NAME_LENGTH and not is_taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def server_tool_names(
    server: str, tools: list[str], owners: dict[str, str] | None = None
) -> dict[str, str]:
    """The model's name of each tool of ``server``, as pi 1.6 assigns them: every tool whose name
    sanitizes to the same name gets the hash suffix (so the order of the list does not matter),
    as does one whose name another server's tool already owns. ``owners`` (name → owner, kept
    across servers and reconnections) is updated."""
    owners = {} if owners is None else owners
    plain = [mcp_tool_name(server, tool) for tool in dict.fromkeys(tools)]
    current: set[str] = set()
    names: dict[str, str] = {}
    for tool in tools:
        owner = f"{server}\0{tool}"

        def taken(candidate: str, owner: str = owner) -> bool:
            return (
                owners.get(candidate, owner) != owner
                or candidate in current
                or plain.count(candidate) > 1
            )

        name = mcp_tool_name(server, tool, taken)
        owners[name] = owner
        current.add(name)
        names[tool] = name
    return names


def server_summary(description: str | None, instructions: str | None) -> str:
    """The first line of the configured description, else of the server's instructions."""
    text = (description or "").strip() or (instructions or "").strip()
    return text.split("\n", 1)[0].strip()
