"""A stdio MCP server built with the SDK's own server side, for the failures the real servers
from the registries do not show: an error result, a big result, a crash, a call that never
ends, a tool that vanishes, garbage on stdout. Started as a user's mcp.json would start it."""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("misbehaving")


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="The value of an environment variable of the server")
def env(name: str) -> str:
    return os.environ.get(name, "<unset>")


@server.tool(description="Always fails")
def fail() -> str:
    raise ToolError("the disk is on fire")


@server.tool(description="A result of 50,000 characters")
def big() -> str:
    return "start-" + "x" * 50_000 + "-end"


@server.tool(description="Exits the server process")
def crash() -> str:
    os._exit(3)


@server.tool(description="Never answers")
async def hang() -> str:
    await anyio.sleep_forever()
    return "unreachable"


@server.tool(description="Removes itself from the tool list")
async def vanish(ctx: Context) -> str:
    server.remove_tool("vanish")
    await ctx.session.send_tool_list_changed()
    return "gone"


@server.tool(description="Writes a line that is not JSON-RPC to stdout, then answers")
def garbage() -> str:
    os.write(1, b"this is not json-rpc\n")
    return "still here"


if __name__ == "__main__":
    print("misbehaving server starting", file=sys.stderr, flush=True)
    server.run("stdio")
