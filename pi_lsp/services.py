"""The services the handlers call, created once per workspace at ``initialize``.

Kept as one explicit object (no hidden globals, no dependency injection by introspection) so a
handler's dependencies are visible; ``Services.create`` wires the graph the same way for the
server and for tests (which pass a model double as ``client``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from pi_lsp.agent.agent import Agent
    from pi_lsp.agent.events import Sender
    from pi_lsp.agent.file_restore import FileRestorer
    from pi_lsp.agent.live_config import LiveConfig
    from pi_lsp.agent.navigation import Navigator
    from pi_lsp.agent.permissions import PermissionAsker
    from pi_lsp.agent.registry import SessionRegistry
    from pi_lsp.agent.resource_service import ResourceService
    from pi_lsp.config import ServerConfig
    from pi_lsp.llm.client import ModelClient
    from pi_lsp.mcp.servers import McpServers
    from pi_lsp.project_memory.service import ProjectMemory
    from pi_lsp.tools.base import EditorBridge, Tool

Progress = Callable[[int | str | None, str], Any]
"""``progress(token, title)`` → an object with ``report(message)`` and ``end()``."""


@attrs.define
class Services:
    live: LiveConfig
    sessions: SessionRegistry
    agent: Agent
    navigator: Navigator
    progress: Progress
    files: FileRestorer
    """Restores of the files the agent changed (navigation and forks with ``restoreFiles``)."""
    mcp: McpServers
    """The MCP servers of ``mcp.json`` (connected in the background once the client is ready)."""
    memory: ProjectMemory | None = None
    """The index of every session of the workspace (started once the client is initialized)."""
    initialization_options: Any = None
    """The options the client started the server with; live settings are merged over them."""
    client_configuration_ready: asyncio.Event = attrs.Factory(asyncio.Event)
    """Set while no ``workspace/configuration`` question is out: the client's latest answer is in
    force (or none is coming)."""

    @classmethod
    def create(
        cls,
        config: ServerConfig,
        resources: ResourceService,
        send_event: Sender,
        *,
        client: ModelClient | None = None,
        editor: EditorBridge | None = None,
        tools: Callable[[], list[Tool]] | None = None,
        progress: Progress | None = None,
        initialization_options: Any = None,
        asker: PermissionAsker | None = None,
    ) -> Services:
        """The whole service graph of one workspace."""
        from pi_lsp.agent.agent import Agent
        from pi_lsp.agent.checkpoint_recorder import CheckpointRecorder
        from pi_lsp.agent.compactor import Compactor
        from pi_lsp.agent.file_restore import FileRestorer
        from pi_lsp.agent.live_config import LiveConfig
        from pi_lsp.agent.navigation import Navigator
        from pi_lsp.agent.permissions import Permissions
        from pi_lsp.agent.registry import SessionRegistry
        from pi_lsp.agent.summary_model import SummaryModel
        from pi_lsp.llm.client import ProviderClient
        from pi_lsp.mcp.oauth_store import MCP_AUTH_FILE, McpAuthFile
        from pi_lsp.mcp.server_log import MCP_LOG, ServerLog
        from pi_lsp.mcp.servers import McpServers
        from pi_lsp.mcp.tool_search import loaded_tool_names
        from pi_lsp.project_memory.locations import index_path
        from pi_lsp.project_memory.service import ProjectMemory
        from pi_lsp.tools.base import NoEditor

        live = LiveConfig(config, resources)
        editor = editor or NoEditor()
        checkpoint_recorder = CheckpointRecorder(editor)
        files = FileRestorer(
            checkpoint_recorder, editor, lambda: live.config.settings.checkpoints.max_file_bytes
        )
        client = client or ProviderClient(live.configured_model, live.editor_models)
        summaries = SummaryModel(live, client)
        memory = (
            ProjectMemory(
                index_path(config.workspace_root),
                lambda: indexed_session_dirs(live.config, resources.agent_dir),
            )
            if config.settings.session_index
            else None
        )
        sessions = SessionRegistry(
            config.session_dir,
            str(config.workspace_root),
            send_event,
            default_thinking_level=lambda: live.current.thinking_level(),
            allowed_session_dirs=openable_session_dirs(config, resources.agent_dir),
            on_session_written=memory.notice_own_write if memory is not None else None,
        )
        compactor = Compactor(live, summaries, resources.extensions)
        if tools is None:
            tools = functools.partial(_tools_with_memory, live, memory)
        permissions = Permissions(
            config.workspace_root,
            lambda: live.current.permission_settings(),
            lambda: live.config.settings.trusted,
            asker,
            editor,
        )
        mcp = McpServers(
            config.workspace_root,
            log=ServerLog(resources.agent_dir / MCP_LOG),
            auth_file=McpAuthFile(resources.agent_dir / MCP_AUTH_FILE),
        )
        built_in = tools

        def branch_tools(runtime):  # tool_search, and the tools it loaded on this branch
            return mcp.branch_tools(lambda: loaded_tool_names(runtime.session.branch()))

        agent = Agent(
            live,
            sessions,
            compactor,
            client,
            editor=editor,
            tools=lambda: [*built_in(), *mcp.tools()],
            checkpoint_recorder=checkpoint_recorder,
            permissions=permissions,
            before_turn=mcp.wait_for_direct,
            branch_tools=branch_tools,
            load_tools=mcp.tools_named,
        )
        return cls(
            live=live,
            sessions=sessions,
            agent=agent,
            navigator=Navigator(live, summaries, files, sessions),
            progress=progress or _no_progress,
            files=files,
            mcp=mcp,
            memory=memory,
            initialization_options=initialization_options,
        )

    @property
    def config(self) -> ServerConfig:
        return self.live.config

    @property
    def resources(self) -> ResourceService:
        return self.live.resources

    def start_session_index(self) -> Coroutine[Any, Any, None] | None:
        """Start indexing the workspace's sessions (on the index's own thread); returns the watch
        of their directories, for the front end to run as a task (``None``: no index)."""
        if self.memory is None:
            return None
        from pi_lsp.project_memory.watch import watch_session_dirs

        self.memory.start()
        return watch_session_dirs(self.memory)

    def stop_session_index(self) -> None:
        if self.memory is not None:
            self.memory.close()

    def reconfigure(self, workspace_configuration: Any) -> tuple[str, ...]:
        """Apply the client's live ``pi`` settings; returns the problems that are new.

        The next turn sees them. A new session directory applies to sessions created, listed or
        opened by id from now on; sessions already open stay where their files are.
        """
        from pi_lsp.config import load_config

        previous = self.live.config
        config = load_config(
            previous.workspace_root,
            self.initialization_options,
            pi_settings=self.live.current.pi_settings,
            workspace_configuration=workspace_configuration,
        )
        self.live.config = config
        self.sessions.session_dir = config.session_dir
        self.sessions.allowed_session_dirs = openable_session_dirs(config, self.resources.agent_dir)
        return tuple(problem for problem in config.problems if problem not in previous.problems)


def _tools_with_memory(live: LiveConfig, memory: ProjectMemory | None) -> list[Tool]:
    """The built-in tools, and the session search in trusted workspaces unless turned off."""
    from pi_lsp.project_memory.tools import memory_tools
    from pi_lsp.tools.registry import default_tools

    settings = live.config.settings
    enabled = memory is not None and settings.trusted and settings.session_search_tools
    return [*default_tools(), *(memory_tools(memory) if enabled and memory else [])]


def openable_session_dirs(config: ServerConfig, agent_dir: Path) -> tuple[Path, ...]:
    """``allowedSessionDirs`` and pi's own session directory for the workspace, whose sessions
    the session search finds (and so must be able to open)."""
    from pi_lsp.project_memory.locations import pi_session_dir

    return (*config.allowed_session_dirs, pi_session_dir(config.workspace_root, agent_dir))


def indexed_session_dirs(config: ServerConfig, agent_dir: Path) -> list[Path]:
    """The session directories the index covers: the server's and pi's own for the workspace."""
    from pi_lsp.project_memory.locations import pi_session_dir

    pis = pi_session_dir(config.workspace_root, agent_dir)
    return [config.session_dir] if pis == config.session_dir else [config.session_dir, pis]


class _NoProgress:
    def report(self, message: str) -> None:
        pass

    def end(self) -> None:
        pass


def _no_progress(token: int | str | None, title: str) -> _NoProgress:
    return _NoProgress()
