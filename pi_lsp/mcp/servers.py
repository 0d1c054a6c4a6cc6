"""Every MCP server of a workspace: connected in the background, offered as registry tools.

``configure`` takes the servers of ``mcp.json`` whenever the resources load, and
``add_client_servers`` those an ACP client passes with ``session/new``: new or changed servers
(re)connect in the background, removed ones stop. ``tools`` is the
``direct`` tools of every server that listed its tools, named as pi 1.6 names them.
``wait_for_direct`` is what a prompt waits for before its request, as pi: at most 10 s, and only
for servers still connecting that have ``direct`` tools. ``statuses`` describes each server for
``pi/mcp`` and the editors.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pi_lsp.mcp.connection import ServerConnection
from pi_lsp.mcp.naming import server_tool_names
from pi_lsp.mcp.tools import mcp_tool
from pi_lsp.resources.mcp_config import McpServerConfig, namespace
from pi_lsp.tools.base import Tool

logger = logging.getLogger(__name__)

FIRST_PROMPT_WAIT_SECONDS = 10.0


class McpServers:
    def __init__(self, cwd: Path, on_change: Callable[[], None] = lambda: None) -> None:
        self.cwd = cwd
        self.connections: dict[str, ServerConnection] = {}
        self._on_change = on_change
        self._owners: dict[str, str] = {}
        """Tool name → ``server\\0tool`` that owns it (names stay put across reconnections)."""
        self._stopping: set[asyncio.Task] = set()
        self._file_configs: list[McpServerConfig] = []
        self._client_configs: dict[str, McpServerConfig] = {}

    def configure(self, configs: Iterable[McpServerConfig]) -> None:
        """The servers of ``mcp.json``: connect the new or changed ones; stop the removed ones."""
        self._file_configs = list(configs)
        self._apply()

    def add_client_servers(self, configs: Iterable[McpServerConfig]) -> list[str]:
        """Servers an ACP client passed with a session: they join this workspace's servers
        (a ``mcp.json`` server of the same name wins, as pi's file servers win over registered
        ones). Returns what was not added, and why."""
        problems = []
        files = {namespace(config.name) for config in self._file_configs}
        for config in configs:
            if namespace(config.name) in files:
                problems.append(f'MCP server "{config.name}" is already configured in mcp.json')
                continue
            self._client_configs[config.name] = config
        self._apply()
        return problems

    def _apply(self) -> None:
        wanted = {config.name: config for config in self._file_configs}
        for name, config in self._client_configs.items():
            wanted.setdefault(name, config)
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.config:
                del self.connections[name]
                self._stop_later(connection)
        for name, config in wanted.items():
            if name not in self.connections:
                connection = ServerConnection(config, self.cwd, self._on_change)
                self.connections[name] = connection
                connection.start()
        self._on_change()

    def tools(self) -> list[Tool]:
        """The ``direct`` tools of every server that listed its tools (dropped ones included:
        a call reconnects)."""
        tools: list[Tool] = []
        for connection in self.connections.values():
            if not connection.config.enabled or not connection.tools:
                continue
            listed = [tool for tool in connection.tools if isinstance(tool.get("name"), str)]
            names = server_tool_names(
                connection.name, [tool["name"] for tool in listed], self._owners
            )
            tools += [
                mcp_tool(connection, tool, names[tool["name"]])
                for tool in listed
                if connection.config.tool_exposure_of(tool["name"]) == "direct"
            ]
        return tools

    async def wait_for_direct(self, timeout: float = FIRST_PROMPT_WAIT_SECONDS) -> None:
        """Wait, at most ``timeout``, for the connecting servers that have ``direct`` tools."""
        waiting = [
            connection.wait_settled(timeout)
            for connection in self.connections.values()
            if connection.state == "connecting" and has_direct_tools(connection.config)
        ]
        if waiting:
            await asyncio.gather(*waiting)

    def statuses(self) -> list[dict[str, Any]]:
        return [status_of(connection) for connection in self.connections.values()]

    async def close(self) -> None:
        connections = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(connection.stop() for connection in connections))
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)

    def _stop_later(self, connection: ServerConnection) -> None:
        with contextlib.suppress(RuntimeError):  # no running loop: nothing was started
            task = asyncio.get_running_loop().create_task(connection.stop())
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)


def has_direct_tools(config: McpServerConfig) -> bool:
    return config.exposure == "direct" or "direct" in config.tool_exposure.values()


def status_of(connection: ServerConnection) -> dict[str, Any]:
    config = connection.config
    exposures: dict[str, int] = {}
    for tool in connection.tools:
        exposure = config.tool_exposure_of(str(tool.get("name")))
        exposures[exposure] = exposures.get(exposure, 0) + 1
    return {
        "name": config.name,
        "source": config.source,
        "scope": config.scope,
        "transport": config.transport,
        "state": connection.state,
        "exposure": config.exposure,
        "toolCount": len(connection.tools),
        "toolExposures": exposures,
        "lastError": connection.last_error,
        "stderrTail": connection.stderr_tail() if config.transport == "stdio" else "",
    }


def client_server(
    name: str, command: str, args: Iterable[str], env: dict[str, str], cwd: Path
) -> McpServerConfig | str:
    """A stdio server an ACP client passed: ``direct`` (the user chose it in the client), its
    name made a valid pi server name. The error message when it cannot be one."""
    safe = "".join(
        char if char.isascii() and (char.isalnum() or char in "_-") else "_" for char in name
    )
    if not safe.strip("_-") or not command:
        return f"the MCP server {name!r} needs a name and a command"
    return McpServerConfig(
        name=safe,
        transport="stdio",
        source="ACP session/new",
        scope="acp",
        command=command,
        args=tuple(args),
        env=dict(env),
        cwd=str(cwd),
        exposure="direct",
    )
