"""A stdio MCP server that answers with what the SDK's own server side never sends: a tool result
with a content type MCP does not have. Written by hand for that alone (pi-lsp's side is the SDK);
it speaks just enough JSON-RPC to be listed and called."""

from __future__ import annotations

import json
import sys

TOOL = {"name": "hologram", "description": "Answers with an unknown content type",
        "inputSchema": {"type": "object", "properties": {}}}  # fmt: skip


def answer(request: dict) -> dict | None:
    method = request.get("method")
    if "id" not in request:
        return None  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "hologram", "frames": 3}]}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


for line in sys.stdin:
    reply = answer(json.loads(line))
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
