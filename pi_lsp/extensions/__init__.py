"""Python extensions: pi-lsp's fifth memory layer, hooks around the moment the context is built.

Extensions are found as pi finds its own (``resources/extension_files.py``: ``<agentDir>/
extensions/``, ``.pi/extensions/`` in trusted workspaces, the settings' ``extensions`` paths)
plus installed packages' ``pi_lsp.extensions`` entry points (``loading.py``). Their hooks, named
after pi's events, run in load order (``hooks.py``) with the events of ``events.py``:
``session_start``, ``before_agent_start``, ``context``, ``tool_result``, ``before_compact`` and
``before_tree``. ``docs/extensions.md`` is the user's guide.
"""

from pi_lsp.extensions.events import (
    BeforeAgentStartEvent,
    BeforeCompactEvent,
    BeforeTreeEvent,
    ContextEvent,
    SessionStartEvent,
    ToolResultEvent,
)
from pi_lsp.extensions.hooks import (
    HookDecision,
    ToolResultChange,
    TreeDecision,
    run_before_agent_start,
    run_before_compact,
    run_before_tree,
    run_context,
    run_session_start,
    run_tool_result,
)
from pi_lsp.extensions.loading import (
    ENTRY_POINT_GROUP,
    Extension,
    ExtensionHost,
    load_entry_points,
    load_file,
)
from pi_lsp.extensions.timings import HookTimings

__all__ = [
    "ENTRY_POINT_GROUP",
    "BeforeAgentStartEvent",
    "BeforeCompactEvent",
    "BeforeTreeEvent",
    "ContextEvent",
    "Extension",
    "ExtensionHost",
    "HookDecision",
    "HookTimings",
    "SessionStartEvent",
    "ToolResultChange",
    "ToolResultEvent",
    "TreeDecision",
    "load_entry_points",
    "load_file",
    "run_before_agent_start",
    "run_before_compact",
    "run_before_tree",
    "run_context",
    "run_session_start",
    "run_tool_result",
]
