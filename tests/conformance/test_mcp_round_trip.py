"""A session with MCP tool calls moves between pi 1.6 and pi-lsp with its calls intact.

pi 1.6's own ``SessionManager`` (``tests/reference/pi16_session.mjs``) writes a session whose
answers call MCP tools (``mcp__time__get_current_time``) and whose system message declares a tool
pi's ``tool_search`` loaded (``toolsAdded``: ``mcp__tools__echo``); pi-lsp continues it through the
real server with real MCP servers configured as a pi user's ``mcp.json`` would, and declares the
tool pi loaded without a new search; pi 1.6 continues what pi-lsp wrote. After each switch both
read the same tree and the same context at every entry.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from pi_lsp.session.session import Session
from tests.e2e.conftest import another_server, request

from .harness import REFERENCE_DIR, ask_pi, run_node_script
from .test_pi16_round_trip import assert_both_agree, pi16_takes_a_turn

LOADOUT = REFERENCE_DIR / "pi16_loadout.mjs"

MISBEHAVING = Path(__file__).resolve().parents[1] / "mcp" / "misbehaving_server.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
ECHO = {
    "name": "mcp__tools__echo",
    "description": "Echo the text back",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def tool_results(file: Path) -> list[dict]:
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    return [
        line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "toolResult"
    ]


async def test_pi16_mcp_calls_continue_in_pi_lsp_and_back(reference_node, tmp_path):
    workspace = tmp_path / "project"
    sessions = workspace / ".pi" / "sessions"
    sessions.mkdir(parents=True)
    file = sessions / "mcp.jsonl"
    pi16_takes_a_turn(
        reference_node,
        file,
        [
            {"op": "system", "content": "You are pi.", "toolsAdded": [ECHO]},
            {"op": "user", "text": "What time is it in Tokyo?"},
            {
                "op": "assistant",
                "text": "Asking the time server.",
                "calls": [["mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}]],
            },
            {"op": "assistant", "text": "It is evening in Tokyo."},
        ],
    )
    assert_both_agree(reference_node, file)

    home = tmp_path / "home"
    (home / "agent").mkdir(parents=True)
    servers = {
        "time": {"command": str(TIME_SERVER), "exposure": "direct"},
        "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "deferred"},
    }
    (home / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    async with ScriptedLLM() as llm:
        options = {"model": "openai/scripted", "apiBase": llm.base_url}
        async with another_server(workspace, options, isolated_environment(home)) as client:
            await request(client, "pi/openSession", {"path": str(file)})
            while True:  # until both servers listed their tools
                states = {
                    s["name"]: s["state"] for s in (await request(client, "pi/mcp", {}))["servers"]
                }
                if set(states.values()) == {"connected"}:
                    break
                await asyncio.sleep(0.05)
            llm.enqueue(
                replies.tool_calls(
                    [
                        ("c1", "mcp__tools__echo", {"text": "loaded by pi"}),
                        (
                            "c2",
                            "mcp__time__convert_time",
                            {
                                "source_timezone": "Asia/Tokyo",
                                "time": "18:00",
                                "target_timezone": "Europe/Paris",
                            },
                        ),
                    ]
                ),
                replies.text("Both answered."),
            )
            result = await request(client, "pi/prompt", {"text": "Echo, then convert."})
            assert result["stopReason"] == "stop"
    declared = {tool["function"]["name"] for tool in llm.requests[0]["tools"]}
    # pi 1.6's tool_search load (its system message) stays declared in pi-lsp, without a search.
    assert {"mcp__tools__echo", "mcp__time__convert_time", "tool_search"} <= declared
    sent = json.dumps(llm.requests[0]["messages"])
    assert "mcp__time__get_current_time" in sent  # pi's MCP call is in the context as it was
    *_, echo, converted = tool_results(file)
    assert echo["content"] == [{"type": "text", "text": "echo: loaded by pi"}]
    assert not converted["isError"] and "Europe/Paris" in converted["content"][0]["text"]
    assert_both_agree(reference_node, file)

    pi16 = pi16_takes_a_turn(
        reference_node,
        file,
        [
            {"op": "user", "text": "Once more from pi."},
            {
                "op": "assistant",
                "text": "Echoing.",
                "calls": [["mcp__tools__echo", {"text": "from pi again"}]],
            },
            {"op": "assistant", "text": "Done."},
        ],
    )
    final = assert_both_agree(reference_node, file)
    assert final["leafId"] == pi16["leafId"]


async def test_pi_lsps_tool_search_loads_are_pi_16s_loadout_and_pi_0842_still_reads(
    reference_node, tmp_path
):
    """pi-lsp's ``tool_search`` load is written as pi 1.6 writes its own (a system message
    declaring the tools): pi 1.6 restores a loadout holding the loaded tool and pi-lsp's other
    tools, pi 0.84.2 builds the same context as pi-lsp at every entry, and pi 1.6 reads the same
    tree and contexts."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    home = tmp_path / "home"
    (home / "agent").mkdir(parents=True)
    servers = {
        "tools": {"command": sys.executable, "args": [str(MISBEHAVING)], "exposure": "deferred"}
    }
    (home / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    async with ScriptedLLM() as llm:
        options = {"model": "openai/scripted", "apiBase": llm.base_url}
        async with another_server(workspace, options, isolated_environment(home)) as client:
            while (await request(client, "pi/mcp", {}))["servers"][0]["state"] != "connected":
                await asyncio.sleep(0.05)
            llm.enqueue(
                replies.tool_calls([("c1", "tool_search", {"query": "echo the text back"})]),
                replies.tool_calls([("c2", "mcp__tools__echo", {"text": "found"})]),
                replies.text("Found it."),
            )
            await request(client, "pi/prompt", {"text": "find an echo tool"})
    [file] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    entries = [json.loads(line) for line in file.read_text().splitlines()]
    [declaration] = [
        entry["message"]
        for entry in entries
        if entry.get("type") == "message" and entry["message"]["role"] == "system"
    ]
    roles = [entry["message"]["role"] for entry in entries if entry.get("type") == "message"]
    # After the search's result, before the answer that calls the loaded tool (pi's place).
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "system",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert declaration["content"] == ""

    [line] = run_node_script(reference_node, LOADOUT, [str(file)]).decode().splitlines()
    loadout = json.loads(line)["tools"]
    assert "mcp__tools__echo" in loadout and "tool_search" in loadout
    assert {"read", "bash", "edit", "write"} <= set(loadout)  # pi keeps its built-in tools
    assert_both_agree(reference_node, file)

    ours = Session.open(file, writable=False)
    answers = ask_pi(reference_node, [["context", str(file), "--leaf", e.id] for e in ours.entries])
    differing = [
        entry.id
        for entry, answer in zip(ours.entries, answers, strict=True)
        if answer.get("result") != ours.build_context(entry.id).to_json()
    ]
    assert differing == []  # pi 0.84.2 (whose model never gets system messages)
