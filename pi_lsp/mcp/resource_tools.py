"""MCP resources through the tools Codex, opencode and pi 1.6 give the model:
``list_mcp_resources``, ``list_mcp_resource_templates`` and ``read_mcp_resource`` (pi's
``extensions/mcp/resources.js``: same names, parameters, descriptions and JSON).

They reach every connected, enabled, non-hidden server with resources. A listing is compact JSON,
``{server?, resources: [{server, uri, name, …}], nextCursor?}``: with ``server``, one page
(``cursor`` continues it); without, every page of every server, with ``errors`` for the servers
that could not be listed. MCP App resources (``ui://`` URIs, ``profile=mcp-app`` HTML) and icons are
left out. A read resource is text as text, images as images, other binaries saved to a temporary
file (``results.py``), all within the 20 KB limit (``output.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pi_lsp.mcp.connection import McpCallError
from pi_lsp.mcp.output import limit_content
from pi_lsp.mcp.results import convert_result
from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from pi_lsp.mcp.connection import ServerConnection

LIST_MCP_RESOURCES = "list_mcp_resources"
LIST_MCP_RESOURCE_TEMPLATES = "list_mcp_resource_templates"
READ_MCP_RESOURCE = "read_mcp_resource"
_MCP_APP = re.compile(r";\s*profile\s*=\s*\"?mcp-app\"?", re.IGNORECASE)

Servers = Callable[[], "list[ServerConnection]"]
"""The servers the tools reach, asked at call time."""

_SERVER_FILTER = {
    "type": "string",
    "description": "MCP server name. Omit to list every server with resources.",
}
_CURSOR = {
    "type": "string",
    "description": "Opaque cursor from a previous call with the same server; "
    "omit for the first page.",
}
_LIST_PARAMETERS = {
    "type": "object",
    "properties": {"server": _SERVER_FILTER, "cursor": _CURSOR},
    "additionalProperties": False,
}


class _ResourceTool(Tool):
    read_only_hint: ClassVar[bool] = True

    def __init__(self, servers: Servers) -> None:
        self.servers = servers

    def find(self, name: str) -> ServerConnection:
        servers = self.servers()
        for server in servers:
            if server.name == name:
                return server
        available = ", ".join(server.name for server in servers)
        suffix = f". Servers with resources: {available}" if available else ""
        raise ToolError(f'MCP server "{name}" has no resources{suffix}')


class _ListTool(_ResourceTool):
    key: ClassVar[str]

    async def page(self, server: ServerConnection, cursor: str | None) -> dict[str, Any]:
        raise NotImplementedError

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        server_name, cursor = _argument(arguments, "server"), _argument(arguments, "cursor")
        if server_name:
            server = self.find(server_name)
            page = await _answer(self.page(server, cursor))
            payload: dict[str, Any] = {
                "server": server.name,
                self.key: _visible(server, page, self.key),
            }
            if page.get("nextCursor") is not None:
                payload["nextCursor"] = page["nextCursor"]
            return _json_result(self.name, server.name, payload)
        if cursor:
            raise ToolError("cursor can only be used when a server is specified")
        items, errors = [], []
        for server in sorted(self.servers(), key=lambda server: server.name):
            try:
                items += await self.every_page(server)
            except (McpCallError, ToolError) as error:
                errors.append({"server": server.name, "error": str(error)})
        payload = {self.key: items, **({"errors": errors} if errors else {})}
        return _json_result(self.name, None, payload)

    async def every_page(self, server: ServerConnection) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await _answer(self.page(server, cursor))
            items += _visible(server, page, self.key)
            cursor = page.get("nextCursor")
            if not cursor:
                return items


class ListMcpResources(_ListTool):
    name = LIST_MCP_RESOURCES
    description = (
        "Lists resources provided by MCP servers. Resources allow servers to share data that "
        "provides context to language models, such as files, database schemas, or "
        "application-specific information. Prefer resources over web search when possible."
    )
    parameters = _LIST_PARAMETERS
    key = "resources"

    async def page(self, server: ServerConnection, cursor: str | None) -> dict[str, Any]:
        return await server.list_resources(cursor)


class ListMcpResourceTemplates(_ListTool):
    name = LIST_MCP_RESOURCE_TEMPLATES
    description = (
        "Lists resource templates provided by MCP servers. Parameterized resource templates "
        "allow servers to share data that takes parameters and provides context to language "
        "models, such as files, database schemas, or application-specific information. Prefer "
        "resource templates over web search when possible."
    )
    parameters = _LIST_PARAMETERS
    key = "resourceTemplates"

    async def page(self, server: ServerConnection, cursor: str | None) -> dict[str, Any]:
        return await server.list_resource_templates(cursor)


class ReadMcpResource(_ResourceTool):
    name = READ_MCP_RESOURCE
    description = (
        "Read a specific resource from an MCP server given the server name and resource URI."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "server": {
                "type": "string",
                "description": "MCP server name exactly as configured. Must match the 'server' "
                "field returned by list_mcp_resources.",
            },
            "uri": {
                "type": "string",
                "description": "Resource URI to read. Must be one of the URIs returned by "
                "list_mcp_resources.",
            },
        },
        "required": ["server", "uri"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        server_name, uri = _argument(arguments, "server"), _argument(arguments, "uri")
        if not server_name:
            raise ToolError("server must be provided")
        if not uri:
            raise ToolError("uri must be provided")
        server = self.find(server_name)
        result = await _answer(server.read_resource(uri))
        contents = result.get("contents") or []
        blocks: list[dict[str, Any]] = []
        for item in contents:
            if len(contents) > 1:
                blocks.append({"type": "text", "text": f"{item.get('uri')}:"})
            blocks.append({"type": "resource", "resource": item})
        if not blocks:
            blocks = [{"type": "text", "text": f"Resource {uri} is empty."}]
        converted = convert_result(server.name, READ_MCP_RESOURCE, {"content": blocks})
        converted.details = {**(converted.details or {}), "tool": READ_MCP_RESOURCE}
        return converted


def resource_tools(servers: Servers) -> list[Tool]:
    return [ListMcpResources(servers), ListMcpResourceTemplates(servers), ReadMcpResource(servers)]


async def _answer(request: Any) -> dict[str, Any]:
    try:
        return await request
    except McpCallError as error:
        raise ToolError(str(error)) from None


def _argument(arguments: dict[str, Any], key: str) -> str | None:
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    return value.strip() or None


def _visible(server: ServerConnection, page: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = page.get(key) or []
    return [
        {"server": server.name, **_without_meta(item)}
        for item in items
        if isinstance(item, dict) and not _is_mcp_app(item)
    ]


def _without_meta(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if key not in ("_meta", "icons")}


def _is_mcp_app(item: dict[str, Any]) -> bool:
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    return uri.startswith("ui://") or bool(_MCP_APP.search(str(item.get("mimeType") or "")))


def _json_result(tool: str, server: str | None, payload: dict[str, Any]) -> ToolResult:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    content, full_path = limit_content([{"type": "text", "text": text}])
    details: dict[str, Any] = {"server": server or "", "tool": tool}
    if full_path:
        details["fullOutputPath"] = full_path
    return ToolResult(content=content, details=details)
