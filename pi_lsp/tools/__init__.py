"""The agent's tools — read, bash, edit, write, grep, find, ls — with pi's names and parameters.

They are editor-aware through an :class:`EditorBridge` and never import pygls or litellm::

    tools = default_tools()
    specs = tool_specs(tools)                        # give these to the LLM
    context = ToolContext(cwd=workspace, editor=bridge, on_update=show_partial)
    result = await tools_by_name(tools)[call_name].execute(call_arguments, context)
    # -> ToolResult(content=[...pi content blocks...], details={...} | None, is_error=bool)
"""

from pi_lsp.tools.base import (
    EditorBridge,
    NoEditor,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    error_result,
    text_result,
    validate_arguments,
)
from pi_lsp.tools.bash import kill_running_commands
from pi_lsp.tools.registry import (
    ALL_TOOL_NAMES,
    CODING_TOOL_NAMES,
    READ_ONLY_TOOL_NAMES,
    create_tool,
    default_tools,
    tool_specs,
    tools_by_name,
)

__all__ = [
    "ALL_TOOL_NAMES",
    "CODING_TOOL_NAMES",
    "READ_ONLY_TOOL_NAMES",
    "EditorBridge",
    "NoEditor",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "create_tool",
    "default_tools",
    "error_result",
    "kill_running_commands",
    "text_result",
    "tool_specs",
    "tools_by_name",
    "validate_arguments",
]
