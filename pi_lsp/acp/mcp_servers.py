"""The MCP servers an ACP client passes with ``session/new``, ``session/load`` and
``session/resume``: its stdio servers join the workspace's MCP servers as ``direct`` servers
(the user chose them in the client). ``initialize`` advertises stdio only, so HTTP and SSE
servers are reported and left out."""

from __future__ import annotations

from typing import Any

from pi_lsp.mcp.servers import client_server
from pi_lsp.services import Services


def mcp_servers_of(services: Services, servers: list[Any]) -> list[str]:
    """Add ``servers`` (the SDK's schema objects) to ``services``; the problems, one line each."""
    problems: list[str] = []
    configs = []
    root = services.config.workspace_root
    for server in servers:
        name = str(getattr(server, "name", "") or "")
        if getattr(server, "type", None) in ("http", "sse") or not hasattr(server, "command"):
            problems.append(f"MCP server {name!r}: only stdio servers are supported over ACP")
            continue
        env = {variable.name: variable.value for variable in server.env or []}
        config = client_server(name, server.command, server.args or [], env, root)
        if isinstance(config, str):
            problems.append(config)
        else:
            configs.append(config)
    return problems + services.mcp.add_client_servers(configs)
