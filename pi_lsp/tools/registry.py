"""The built-in tool set, in pi's order, and the specs the LLM is given."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_lsp.tools.base import Tool
from pi_lsp.tools.bash import BashTool
from pi_lsp.tools.edit import EditTool
from pi_lsp.tools.find import FindTool
from pi_lsp.tools.grep import GrepTool
from pi_lsp.tools.ls import LsTool
from pi_lsp.tools.read import ReadTool
from pi_lsp.tools.write import WriteTool

ALL_TOOL_NAMES = ("read", "bash", "edit", "write", "grep", "find", "ls")
CODING_TOOL_NAMES = ("read", "bash", "edit", "write")  # pi's default set
READ_ONLY_TOOL_NAMES = ("read", "grep", "find", "ls")

_CLASSES: dict[str, type[Tool]] = {
    "read": ReadTool,
    "bash": BashTool,
    "edit": EditTool,
    "write": WriteTool,
    "grep": GrepTool,
    "find": FindTool,
    "ls": LsTool,
}


def create_tool(name: str) -> Tool:
    try:
        return _CLASSES[name]()
    except KeyError:
        raise ValueError(f"Unknown tool name: {name}") from None


def default_tools(names: Iterable[str] = ALL_TOOL_NAMES) -> list[Tool]:
    """New instances of the named tools (all seven by default), in the order given."""
    return [create_tool(name) for name in names]


def tool_specs(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """``{name, description, parameters}`` for each tool, for the LLM request."""
    return [tool.spec() for tool in tools]


def tools_by_name(tools: Iterable[Tool]) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools}
