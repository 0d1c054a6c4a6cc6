"""The MCP servers a client passes in ``session/new``, ``session/load`` and ``session/resume``.

pi-lsp does not connect them yet (the MCP work will, through ``pi_lsp/mcp/``): until then the
user is told so once in the chat, rather than left to wonder why the servers' tools are missing.
"""

from __future__ import annotations

from typing import Any

from acp import update_agent_message_text


def unused_servers_notice(mcp_servers: list[Any] | None) -> Any | None:
    """The agent message saying the servers passed are not used, or None when none were."""
    names = [str(getattr(server, "name", "") or "unnamed") for server in mcp_servers or []]
    if not names:
        return None
    listed = ", ".join(f"`{name}`" for name in names)
    return update_agent_message_text(
        f"_pi-lsp does not connect MCP servers yet: {listed} "
        f"{'is' if len(names) == 1 else 'are'} not used in this session._\n\n"
    )
