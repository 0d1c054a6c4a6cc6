"""The services the handlers call, created once per workspace at ``initialize``.

Kept as one explicit object (no hidden globals, no dependency injection by introspection) so a
handler's dependencies are visible and a test can build the graph by hand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from pi_lsp.agent.agent import Agent
    from pi_lsp.agent.registry import SessionRegistry
    from pi_lsp.config import ServerConfig


@attrs.define
class Services:
    config: ServerConfig
    sessions: SessionRegistry
    agent: Agent
    progress: Callable[[int | str | None, str], Any]
    """``progress(token, title)`` → an object with
    ``report(message)`` and ``end()`` (``$/progress``)."""
    initialization_options: Any = None
    """The options the client started the server with; live settings are merged over them."""
    client_configuration_ready: asyncio.Event = attrs.Factory(asyncio.Event)
    """Set once the client's ``workspace/configuration`` answer is in force (or none is coming)."""

    def reconfigure(self, workspace_configuration: Any) -> tuple[str, ...]:
        """Apply the client's live ``pi`` settings; returns the problems that are new."""
        from pi_lsp.config import load_config

        previous = self.agent.config
        config = load_config(
            previous.workspace_root,
            self.initialization_options,
            pi_settings=self.agent.current.pi_settings,
            workspace_configuration=workspace_configuration,
        )
        self.config = config
        self.agent.reconfigure(config)
        return tuple(problem for problem in config.problems if problem not in previous.problems)
