"""The services the handlers call, created once per workspace at ``initialize``.

Kept as one explicit object (no hidden globals, no dependency injection by introspection) so a
handler's dependencies are visible and a test can build the graph by hand.
"""

from __future__ import annotations

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
    """``progress(token, title)`` → an object with ``report(message)`` and ``end()`` (``$/progress``)."""
