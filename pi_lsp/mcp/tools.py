"""MCP server tools as ordinary tools of the agent's registry, so permissions, hooks, checkpoints
and the chat treat them like the built-in ones.

Each tool keeps pi 1.6's name (``mcp__<server>__<tool>``), its description (the server's, else
its title, else ``MCP tool <tool> from server <server>``) and its input schema (an ``object``
with ``properties``, as pi's ``normalizeMcpInputSchema`` makes it). Running it calls the server
through its connection; progress notifications become the tool row's updates.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from pi_lsp.mcp.connection import McpCallError
from pi_lsp.mcp.results import convert_result
from pi_lsp.tools.base import Tool, ToolContext, ToolResult, error_result, text_result

if TYPE_CHECKING:
    from pi_lsp.mcp.connection import ServerConnection


class McpTool(Tool):
    """One server tool; :func:`mcp_tool` makes the subclass that carries its name and schema."""

    server_tool: ClassVar[str]
    """The tool's name on its server."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        def on_progress(done: float, total: float | None, message: str | None) -> None:
            shown = f"{done:g}/{total:g}" if total else f"{done:g}"
            text = f"{message} ({shown})" if message else f"progress {shown}"
            context.emit_update(text_result(text, {"progress": done, "total": total}))

        server = self.connection.name
        if self.server_tool not in {tool.get("name") for tool in self.connection.tools}:
            return error_result(f'MCP server "{server}" no longer has the tool {self.server_tool}')
        try:
            result = await self.connection.call_tool(self.server_tool, arguments, on_progress)
        except McpCallError as error:
            return error_result(str(error), {"server": server, "tool": self.server_tool})
        return convert_result(
            server, self.server_tool, result, readable_resources=self.connection.has_resources
        )


_CLASSES: dict[tuple[str, str, str], type[McpTool]] = {}


def mcp_tool(connection: ServerConnection, listed: dict[str, Any], name: str) -> McpTool:
    """The registry tool ``name`` for the tool ``listed`` by ``connection``'s server."""
    description = (
        str(listed.get("description") or "").strip()
        or listed.get("title")
        or (listed.get("annotations") or {}).get("title")
        or f"MCP tool {listed['name']} from server {connection.name}"
    )
    parameters = input_schema(listed.get("inputSchema"))
    read_only = (listed.get("annotations") or {}).get("readOnlyHint") is True
    key = (name, str(description), json.dumps([parameters, read_only], sort_keys=True))
    cls = _CLASSES.get(key)
    if cls is None:
        attributes = {
            "name": name,
            "description": description,
            "parameters": parameters,
            "server_tool": listed["name"],
            "read_only_hint": read_only,
        }
        cls = _CLASSES[key] = type(f"McpTool_{name}", (McpTool,), attributes)
    return cls(connection)


def input_schema(schema: Any) -> dict[str, Any]:
    schema = dict(schema) if isinstance(schema, dict) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema
