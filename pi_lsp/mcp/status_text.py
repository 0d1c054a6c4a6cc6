"""The MCP servers' status as plain text, for clients that show text (ACP's ``/mcp``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

NOT_DECLARED_NOTE = (
    "Direct tools are declared to the model; deferred and codemode (pi's default) tools are "
    "found and loaded with tool_search; hidden tools are never used."
)

STATE_WORDS = {"needs-auth": "needs sign-in (/mcp login <server>)"}
"""States said in words where ``pi/mcp``'s name for them says too little."""


def status_text(statuses: Iterable[dict[str, Any]]) -> str:
    lines = []
    for status in statuses:
        exposures = ", ".join(
            f"{count} {exposure}" for exposure, count in sorted(status["toolExposures"].items())
        )
        tools = f"{status['toolCount']} tools" + (f" ({exposures})" if exposures else "")
        state = STATE_WORDS.get(status["state"], status["state"])
        lines.append(f"- {status['name']}: {state}, {tools} — {status['source']}")
        if status["lastError"] and status["state"] != "connected":
            lines.append(f"  error: {status['lastError']}")
        tail = status["stderrTail"].strip()
        if tail and status["state"] == "failed":
            lines += [f"  stderr: {line}" for line in tail.splitlines()[-5:]]
    if not lines:
        return "No MCP servers. Configure them in ~/.pi/agent/mcp.json or .pi/mcp.json."
    usage = "/mcp reconnect|enable|disable|login|logout <server>"
    return "\n".join(["MCP servers:", *lines, "", NOT_DECLARED_NOTE, f"Actions: {usage}"])
