"""An MCP server built with the SDK's own server side, for the failures the real servers from the
registries do not show: an error result, a big result, a crash, a call that never ends, a tool
that vanishes, garbage on stdout. Started as a user's mcp.json would start it: over stdio, or with
``--http PORT [--token TOKEN]`` as a streamable-HTTP server on 127.0.0.1:PORT/mcp that answers
401 to requests without ``Authorization: Bearer TOKEN``."""

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


@server.tool(description="Sends a log message, then answers")
async def log(ctx: Context, text: str) -> str:
    await ctx.warning(text, logger_name="misbehaving")
    return "logged"


@server.tool(description="Always fails")
def fail() -> str:
    raise ToolError("the disk is on fire")


@server.tool(description="A result of 50,000 characters")
def big() -> str:
    return "start-" + "x" * 50_000 + "-end"


@server.tool(description="Exits the server process")
def crash() -> str:
    os._exit(3)


@server.tool(description="Answers after `steps` progress notifications, `pause` seconds apart")
async def slow(ctx: Context, steps: int, pause: float) -> str:
    for step in range(steps):
        await anyio.sleep(pause)
        await ctx.report_progress(step + 1, steps)
    return f"done after {steps} steps"


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


def bearer_only(app, token: str):
    """``app`` behind a bearer token: anything else is answered 401."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


def serve_http(port: int, token: str | None) -> None:
    import uvicorn

    app = server.streamable_http_app()
    uvicorn.run(bearer_only(app, token) if token else app, host="127.0.0.1", port=port)


if __name__ == "__main__":
    print("misbehaving server starting", file=sys.stderr, flush=True)
    if "--http" in sys.argv:
        arguments = sys.argv[1:]
        port = int(arguments[arguments.index("--http") + 1])
        token = arguments[arguments.index("--token") + 1] if "--token" in arguments else None
        serve_http(port, token)
    else:
        server.run("stdio")
