"""Every MCP server of a workspace: connected in the background, offered as registry tools.

``configure`` takes the servers of ``mcp.json`` (and of ACP clients) whenever the resources
load: new or changed servers (re)connect in the background, removed ones stop. ``tools`` is the
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
from pi_lsp.resources.mcp_config import McpServerConfig
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

    def configure(self, configs: Iterable[McpServerConfig]) -> None:
        """Connect the servers of ``configs`` that are new or changed; stop the others."""
        wanted = {config.name: config for config in configs}
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
