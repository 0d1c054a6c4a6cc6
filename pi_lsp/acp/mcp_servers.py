"""The MCP servers an ACP client passes with ``session/new``, ``session/load`` and
``session/resume``: its stdio and streamable-HTTP servers join the workspace's MCP servers as
``direct`` servers (the user chose them in the client). ``initialize`` advertises stdio and HTTP,
so SSE servers (and any other kind) are reported and left out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_lsp.mcp.servers import client_http_server, client_server
from pi_lsp.services import Services

if TYPE_CHECKING:
    from pi_lsp.mcp.servers import McpServerConfig


def mcp_servers_of(services: Services, servers: list[Any]) -> list[str]:
    """Add ``servers`` (the SDK's schema objects) to ``services``; the problems, one line each."""
    problems: list[str] = []
    configs = []
    for server in servers:
        config = _config_of(services, server)
        if isinstance(config, str):
            problems.append(config)
        else:
            configs.append(config)
    return problems + services.mcp.add_client_servers(configs)


def _config_of(services: Services, server: Any) -> McpServerConfig | str:
    name = str(getattr(server, "name", "") or "")
    kind = getattr(server, "type", None)
    if kind == "http":
        headers = {header.name: header.value for header in server.headers or []}
        return client_http_server(name, server.url, headers)
    if kind is not None or not hasattr(server, "command"):
        return f"MCP server {name!r}: only stdio and HTTP servers are supported over ACP"
    env = {variable.name: variable.value for variable in server.env or []}
    return client_server(
        name, server.command, server.args or [], env, services.config.workspace_root
    )
