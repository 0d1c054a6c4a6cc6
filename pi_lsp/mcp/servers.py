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
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from pi_lsp.mcp.connection import McpCallError, ServerConnection
from pi_lsp.mcp.naming import server_tool_names
from pi_lsp.mcp.oauth_store import McpAuthFile
from pi_lsp.mcp.resource_tools import resource_tools
from pi_lsp.mcp.server_log import ServerLog
from pi_lsp.mcp.tool_search import ToolSearchTool
from pi_lsp.mcp.tools import mcp_tool
from pi_lsp.resources.mcp_config import McpServerConfig, namespace
from pi_lsp.tools.base import Tool

logger = logging.getLogger(__name__)

FIRST_PROMPT_WAIT_SECONDS = 10.0
STDERR_SHOWN = 600
"""The end of a failed server's stderr its failure message shows (bytes)."""


class McpServers:
    def __init__(
        self,
        cwd: Path,
        on_change: Callable[[], None] = lambda: None,
        log: ServerLog | None = None,
        auth_file: McpAuthFile | None = None,
    ) -> None:
        self.cwd = cwd
        self.log = log
        self.auth_file = auth_file
        """pi's ``mcp-auth.json``, the HTTP servers' OAuth sign-ins (None: no OAuth)."""
        self.open_sign_in_page: Callable[[str, str], Awaitable[None]] = _cannot_open
        """Shows the user (server name, authorization page URL): ``window/showDocument`` over
        LSP, a link in the chat over ACP."""
        """pi's ``mcp.log``, where the servers' log messages go (None: nowhere)."""
        self.connections: dict[str, ServerConnection] = {}
        self.on_change = on_change
        self.on_failure: Callable[[str], None] = lambda message: None
        """Told once, in a sentence with the stderr tail, when a server fails to start (again
        after it was connected in between)."""
        self._reported: set[str] = set()
        self._enabled_here: dict[str, bool] = {}
        """Servers enabled or disabled with ``set_enabled`` while this server runs."""
        self._owners: dict[str, str] = {}
        """Tool name → ``server\\0tool`` that owns it (names stay put across reconnections)."""
        self._stopping: set[asyncio.Task] = set()
        self._file_configs: list[McpServerConfig] = []
        self._resource_tools = resource_tools(self._with_resources)
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

    def reconnect(self, name: str) -> dict[str, Any]:
        """Stop ``name`` and start it again (in the background); its status now."""
        connection = self._connection(name)
        self._reported.discard(name)
        task = connection.begin_reconnect()
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        return status_of(connection)

    def set_enabled(self, name: str, enabled: bool) -> dict[str, Any]:
        """Start or stop ``name`` while this server runs (``mcp.json`` stays as it is)."""
        self._connection(name)
        self._enabled_here[name] = enabled
        self._apply()
        return status_of(self._connection(name))

    async def sign_in(self, name: str) -> dict[str, Any]:
        """Sign in to ``name`` (its authorization page goes to ``open_sign_in_page``) and connect
        with the new tokens; its status then. :class:`McpCallError` when the sign-in failed."""
        connection = self._connection(name)
        self._reported.discard(name)
        await connection.sign_in(lambda url: self.open_sign_in_page(name, url))
        return status_of(connection)

    def paste_redirect(self, name: str, redirected_url: str) -> None:
        """Hand the sign-in to ``name`` under way the redirected URL the user pasted;
        :class:`McpCallError` when no sign-in waits or the URL is not its redirect."""
        self._connection(name).finish_sign_in(redirected_url)

    async def signed_in(self, name: str) -> dict[str, Any]:
        """``name``'s status once the sign-in under way ended; :class:`McpCallError` if it
        failed."""
        connection = self._connection(name)
        await connection.signed_in()
        return status_of(connection)

    def sign_out(self, name: str) -> tuple[bool, dict[str, Any]]:
        """Forget ``name``'s sign-in and reconnect it (it then needs a sign-in); whether there
        was one, and its status."""
        removed = self._connection(name).sign_out()
        return removed, self.reconnect(name)

    def _connection(self, name: str) -> ServerConnection:
        connection = self.connections.get(name)
        if connection is None:
            known = ", ".join(sorted(self.connections)) or "none"
            raise KeyError(f"no MCP server named {name!r} (configured: {known})")
        return connection

    def _changed(self) -> None:
        for connection in self.connections.values():
            if connection.state == "connected":
                self._reported.discard(connection.name)
            elif (
                connection.state in ("failed", "needs-auth")
                and connection.name not in self._reported
            ):
                self._reported.add(connection.name)
                self.on_failure(failure_message(connection))
        self.on_change()

    def _apply(self) -> None:
        wanted = {config.name: config for config in self._file_configs}
        for name, config in self._client_configs.items():
            wanted.setdefault(name, config)
        for name, enabled in self._enabled_here.items():
            if name in wanted:
                wanted[name] = attrs.evolve(wanted[name], enabled=enabled)
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.config:
                del self.connections[name]
                self._stop_later(connection)
        for name, config in wanted.items():
            if name not in self.connections:
                connection = ServerConnection(
                    config, self.cwd, self._changed, self.log, self.auth_file
                )
                self.connections[name] = connection
                connection.start()
        self._changed()

    def tools(self) -> list[Tool]:
        """The ``direct`` tools of every server that listed its tools (dropped ones included:
        a call reconnects), and the resource tools when a ``direct`` server has resources."""
        tools: list[Tool] = [
            tool for tool, exposure, _ in self._all_tools() if exposure == "direct"
        ]
        # The resource tools' exposure is the widest of the servers they reach (pi's rule).
        if any(connection.config.exposure == "direct" for connection in self._with_resources()):
            tools += self._resource_tools
        return tools

    def branch_tools(self, loaded: Callable[[], list[str]]) -> list[Tool]:
        """What a branch adds to ``tools()``: the tools ``tool_search`` loaded on it (``loaded()``
        reads them from the branch; those that still exist), and ``tool_search`` itself while
        there are tools to find."""
        if not any(may_need_search(connection.config) for connection in self.connections.values()):
            return []
        searchable = self.searchable()
        by_name = {tool.name: tool for tool, _ in searchable}
        again = [by_name[name] for name in loaded() if name in by_name]
        declared = {tool.name for tool in self.tools()} | {tool.name for tool in again}
        return [ToolSearchTool(self.searchable, declared, self.wait_for_all), *again]

    def tools_named(self, names: list[str]) -> list[Tool]:
        """The searchable tools of these names (a ``tool_search`` load within a turn)."""
        wanted = set(names)
        return [tool for tool, _ in self.searchable() if tool.name in wanted]

    def searchable(self) -> list[tuple[Tool, str]]:
        """The tools ``tool_search`` can load (``deferred``, and ``codemode`` for want of pi's
        sandbox), each with its server's text for the ranker."""
        return [
            (tool, namespace_text)
            for tool, exposure, namespace_text in self._all_tools()
            if exposure in ("deferred", "codemode")
        ]

    def _all_tools(self) -> list[tuple[Tool, str, str]]:
        """(tool, exposure, namespace text) of every listed tool of every enabled server."""
        tools: list[tuple[Tool, str, str]] = []
        for connection in self.connections.values():
            if not connection.config.enabled or not connection.tools:
                continue
            listed = [tool for tool in connection.tools if isinstance(tool.get("name"), str)]
            names = server_tool_names(
                connection.name, [tool["name"] for tool in listed], self._owners
            )
            config = connection.config
            namespace_text = " ".join(
                [namespace(config.name), config.description or "", connection.instructions or ""]
            )
            tools += [
                (
                    mcp_tool(connection, tool, names[tool["name"]]),
                    config.tool_exposure_of(tool["name"]),
                    namespace_text,
                )
                for tool in listed
            ]
        return tools

    def _with_resources(self) -> list[ServerConnection]:
        """The servers the resource tools reach: enabled, not hidden, offering resources."""
        return [
            connection
            for connection in self.connections.values()
            if connection.config.enabled
            and connection.config.exposure != "hidden"
            and connection.has_resources
        ]

    async def wait_for_direct(self, timeout: float = FIRST_PROMPT_WAIT_SECONDS) -> None:
        """Wait, at most ``timeout``, for the connecting servers that have ``direct`` tools."""
        waiting = [
            connection.wait_settled(timeout)
            for connection in self.connections.values()
            if connection.state == "connecting" and has_direct_tools(connection.config)
        ]
        if waiting:
            await asyncio.gather(*waiting)

    async def wait_for_all(self, timeout: float = FIRST_PROMPT_WAIT_SECONDS) -> None:
        """Wait, at most ``timeout``, for every server still connecting (``tool_search``)."""
        waiting = [
            connection.wait_settled(timeout)
            for connection in self.connections.values()
            if connection.state == "connecting"
        ]
        if waiting:
            await asyncio.gather(*waiting)

    def statuses(self) -> list[dict[str, Any]]:
        return [status_of(connection) for connection in self.connections.values()]

    @property
    def running(self) -> bool:
        """Whether any server is connected, connecting or still stopping."""
        return bool(self.connections or self._stopping)

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


async def _cannot_open(name: str, url: str) -> None:
    raise McpCallError(f'cannot show the sign-in page of MCP server "{name}": no editor')


def failure_message(connection: ServerConnection) -> str:
    """Why ``connection``'s server failed to start, with the end of its stderr."""
    if connection.state == "needs-auth":
        return f'MCP server "{connection.name}" needs sign-in: {connection.last_error}'
    text = f'MCP server "{connection.name}" failed to start: {connection.last_error}'
    tail = connection.stderr_tail(STDERR_SHOWN).strip()
    return f"{text}\n{tail}" if tail else text


def may_need_search(config: McpServerConfig) -> bool:
    """Whether ``tool_search`` is how some tools of this server reach the model."""
    exposures = {config.exposure, *config.tool_exposure.values()}
    return config.enabled and bool(exposures & {"deferred", "codemode"})


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
    return _client_config(
        name,
        bool(command),
        "a command",
        transport="stdio",
        command=command,
        args=tuple(args),
        env=dict(env),
        cwd=str(cwd),
    )


def client_http_server(name: str, url: str, headers: dict[str, str]) -> McpServerConfig | str:
    """A streamable-HTTP server an ACP client passed, ``direct`` like its stdio ones; its
    headers are sent as the client gives them."""
    usable = urlsplit(url or "").scheme in ("http", "https")
    return _client_config(
        name, usable, "an http(s) URL", transport="http", url=url, headers=dict(headers)
    )


def _client_config(name: str, usable: bool, needs: str, **fields: Any) -> McpServerConfig | str:
    safe = _client_server_name(name)
    if not safe.strip("_-") or not usable:
        return f"the MCP server {name!r} needs a name and {needs}"
    return McpServerConfig(
        name=safe, source="ACP session/new", scope="acp", exposure="direct", **fields
    )


def _client_server_name(name: str) -> str:
    """A client's server name as a valid pi server name: other characters become ``_``."""
    return "".join(
        char if char.isascii() and (char.isalnum() or char in "_-") else "_" for char in name
    )
