"""``pi-lsp acp`` driven by a client nobody here wrote: the official ACP TypeScript SDK
(``@agentclientprotocol/sdk``, pinned in ``ts_client/package.json``) through its
``buildSession().withSession()`` API (``ts_client/client.mjs``), on the scripted model.

The SDK's session helper drops the updates of a session it has not been told about, validates
every update with its own schema, and treats ``content`` in a ``tool_call_update`` as replacing
the tool call's content, as the spec says."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import replies
from tests.e2e.acp.support import HOME, acp_command
from tests.e2e.test_mcp import http_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLIENT = Path(__file__).parent / "ts_client" / "client.mjs"
REFERENCE_NODE = Path(__file__).parents[2] / "reference" / "node_modules" / ".bin" / "node"


def _node() -> str:
    """Node 22 from the pi references when installed, else the machine's Node."""
    node = str(REFERENCE_NODE) if REFERENCE_NODE.exists() else shutil.which("node")
    assert node, "Node is needed for the TypeScript client (make install)"
    assert (CLIENT.parent / "node_modules").is_dir(), "run make install-acp-client"
    return node


async def _run_client(scripted_llm, workspace: Path, **scenario: Any) -> dict[str, Any]:
    options = {"model": "openai/scripted", "apiBase": scripted_llm.base_url, "autoName": False}
    arguments = json.dumps({"command": acp_command(options), "cwd": str(workspace), **scenario})
    process = await asyncio.create_subprocess_exec(
        _node(),
        str(CLIENT),
        arguments,
        cwd=CLIENT.parent,
        env=isolated_environment(HOME),
        stdout=asyncio.subprocess.PIPE,
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, "the TypeScript client failed (its stderr is above)"
    return json.loads(output.decode().splitlines()[-1])


def _final(updates: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return [update for update in updates if update.get("toolCallId") == call_id][-1]


async def test_the_official_typescript_sdk_drives_a_session_end_to_end(scripted_llm, workspace):
    edit = {"path": "app.py", "edits": [{"oldText": "a - b", "newText": "a + b"}]}
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "read", {"path": "app.py"})], text="Reading."),
        replies.tool_calls([("call-2", "edit", edit)]),
        replies.tool_calls([("call-3", "write", {"path": "notes.md", "content": "fixed\n"})]),
        replies.text("Fixed and noted."),
        replies.slow_text("one two three four five six", chunk_delay=0.3),
    )
    report = await _run_client(scripted_llm, workspace)
    assert report["agentName"] == "pi-lsp"
    app, notes = str(workspace / "app.py"), str(workspace / "notes.md")

    edited = report["turns"]["edit"]
    assert edited["stopReason"] == "end_turn"
    kinds = [update["sessionUpdate"] for update in edited["updates"]]
    assert kinds[0] == "available_commands_update", "the command list reached the session"
    names = {command["name"] for command in edited["updates"][0]["availableCommands"]}
    assert {"tree", "navigate", "compact", "new"} <= names
    # edit reads the file through the client again (an unsaved buffer is what it changes)
    assert report["fs"] == [["read", app], ["read", app], ["write", app], ["write", notes]]
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (workspace / "notes.md").read_text() == "fixed\n"
    for updates in (edited["updates"], report["loaded"]):
        edit_diff = _final(updates, "call-2")["content"][0]
        assert (edit_diff["type"], edit_diff["path"], edit_diff["newText"]) == (
            "diff",
            app,
            "a + b",
        )
        write_diff = _final(updates, "call-3")["content"][0]
        assert (write_diff["type"], write_diff["path"], write_diff["newText"]) == (
            "diff",
            notes,
            "fixed\n",
        )

    assert report["turns"]["cancel"]["stopReason"] == "cancelled"
    loaded_text = [
        update["content"]["text"]
        for update in report["loaded"]
        if update["sessionUpdate"] == "user_message_chunk"
    ]
    assert loaded_text == ["fix add and write notes", "count slowly"]
    assert report["closed"] == [{}, {}]


async def test_an_http_mcp_server_the_client_passes_gives_the_model_its_tools(
    scripted_llm, workspace
):
    with http_server("acp-token") as url:
        server = {
            "type": "http",
            "name": "web tools",
            "url": url,
            "headers": [{"name": "Authorization", "value": "Bearer acp-token"}],
        }
        scripted_llm.enqueue(
            replies.tool_calls([("call-1", "mcp__web_tools__echo", {"text": "over http"})]),
            replies.text("Echoed."),
        )
        report = await _run_client(scripted_llm, workspace, mcpServers=[server])
    assert report["mcpCapabilities"] == {"http": True, "sse": False}
    updates = report["turns"]["mcp"]["updates"]
    assert report["turns"]["mcp"]["stopReason"] == "end_turn"
    echoed = _final(updates, "call-1")
    assert echoed["status"] == "completed"
    assert "echo: over http" in json.dumps(echoed["content"])
