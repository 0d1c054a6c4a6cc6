"""MCP servers over LSP, end to end: the real server reads the user's ``mcp.json``, starts real
servers from the registries (PyPI's ``mcp-server-time``, npm's ``server-everything``) and one
built with the SDK's server side (``tests/mcp/misbehaving_server.py``) as a user's file would,
and the scripted model calls their tools through the real turn loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from pi_lsp.client import EventLog, isolated_environment
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.conftest import SCRIPTED_MODEL, another_server, request

MCP_DIR = Path(__file__).resolve().parents[1] / "mcp"
EVERYTHING = MCP_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
MISBEHAVING = {
    "command": sys.executable,
    "args": [str(MCP_DIR / "misbehaving_server.py")],
    "exposure": "direct",
    "timeout": 5,
}


@contextlib.asynccontextmanager
async def serving(
    workspace: Path, home: Path, servers: dict, setup=None, capabilities=None, **options
):
    """A pi-lsp server whose agent directory holds ``servers`` as its ``mcp.json``, with the
    scripted model; yields (client, scripted model). ``setup(client)`` runs before
    ``initialize``; ``capabilities`` are the client's."""
    agent = home / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    llm = ScriptedLLM()
    await llm.start()
    settings = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url, **options}
    try:
        async with another_server(
            workspace, settings, isolated_environment(home), capabilities, setup=setup
        ) as client:
            yield client, llm
    finally:
        await llm.stop()


def tool_results(workspace: Path) -> list[dict]:
    [session] = (workspace / ".pi" / "sessions").glob("*.jsonl")
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [
        line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "toolResult"
    ]


def declared_tools(llm_request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in llm_request.get("tools", [])]


async def test_the_model_calls_a_pypi_server_tool_and_gets_its_result(workspace, tmp_path):
    servers = {"time": {"command": str(TIME_SERVER), "exposure": "direct"}}
    async with serving(workspace, tmp_path, servers) as (client, llm):
        call = ("call_1", "mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
        llm.enqueue(replies.tool_calls([call]), replies.text("It is evening in Tokyo."))
        result = await request(client, "pi/prompt", {"text": "What time is it in Tokyo?"})
    assert result["stopReason"] == "stop"
    # The first prompt waited for the server with direct tools: they were declared.
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(
        declared_tools(llm.requests[0])
    )
    [answer] = tool_results(workspace)
    assert answer["toolName"] == "mcp__time__get_current_time"
    assert answer["isError"] is False
    assert json.loads(answer["content"][0]["text"])["timezone"] == "Asia/Tokyo"
    assert answer["details"] == {"server": "time", "tool": "get_current_time"}
    assert "Asia/Tokyo" in json.dumps(llm.requests[1]["messages"][-1])


@pytest.mark.skipif(not EVERYTHING.exists(), reason="run tests/mcp/install.sh (make install)")
async def test_npm_server_everything_echoes_and_sends_images(workspace, tmp_path):
    servers = {
        "everything": {
            "command": "node",
            "args": [str(EVERYTHING / "dist" / "index.js"), "stdio"],
            "toolExposure": {
                "echo": "direct",
                "get-tiny-image": "direct",
                "trigger-long-running-operation": "direct",
            },
        }
    }
    events = EventLog()

    def record_events(client):
        client.feature("pi/event")(lambda params: events.add(params))

    async with serving(workspace, tmp_path, servers, setup=record_events) as (client, llm):
        llm.enqueue(
            replies.tool_calls(
                [
                    ("call_1", "mcp__everything__echo", {"message": "hello"}),
                    ("call_2", "mcp__everything__get_tiny_image", {}),
                    (
                        "call_3",
                        "mcp__everything__trigger_long_running_operation",
                        {"duration": 1, "steps": 3},
                    ),
                ]
            ),
            replies.text("Done."),
        )
        await request(client, "pi/prompt", {"text": "echo and show an image"})
    declared = declared_tools(llm.requests[0])
    # Only the tools given direct exposure are declared; the others stay with the server.
    assert sorted(name for name in declared if name.startswith("mcp__")) == [
        "mcp__everything__echo",
        "mcp__everything__get_tiny_image",
        "mcp__everything__trigger_long_running_operation",
    ]
    echo, image, long_running = tool_results(workspace)
    assert not long_running["isError"]
    # The server's progress notifications are the tool row's updates.
    updates = [
        event["content"][0]["text"]
        for event in events.events()
        if event["type"] == "tool_execution_update" and event["toolCallId"] == "call_3"
    ]
    assert updates == ["progress 1/3", "progress 2/3", "progress 3/3"]
    assert echo["content"] == [{"type": "text", "text": "Echo: hello"}]
    assert [block["type"] for block in image["content"]] == ["text", "image", "text"]
    assert image["content"][1]["mimeType"] == "image/png"


async def test_bad_servers_give_clear_tool_errors_and_the_session_goes_on(workspace, tmp_path):
    servers = {
        "bad": MISBEHAVING,
        "silent": {
            # Writes garbage to stdout and never answers: it fails to start, with a reason.
            "command": sys.executable,
            "args": ["-c", "import time; print('garbage', flush=True); time.sleep(600)"],
            "exposure": "direct",
            "timeout": 2,
        },
        "hostile": {
            "command": sys.executable,
            "args": [str(MCP_DIR / "hostile_server.py")],
            "exposure": "direct",
        },
    }
    async with serving(workspace, tmp_path, servers) as (client, llm):
        llm.enqueue(
            replies.tool_calls(
                [
                    ("c1", "mcp__bad__fail", {}),
                    ("c2", "mcp__bad__hang", {}),
                    ("c3", "mcp__bad__garbage", {}),
                    ("c4", "mcp__bad__big", {}),
                    ("c5", "mcp__nowhere__tool", {}),
                    ("c6", "mcp__bad__crash", {}),
                    ("c7", "mcp__bad__echo", {"text": "back again"}),
                    ("c8", "mcp__hostile__hologram", {}),
                ]
            ),
            replies.text("Survived."),
        )
        result = await request(client, "pi/prompt", {"text": "try everything"})
        assert result["stopReason"] == "stop"
        llm.enqueue(replies.text("Still here."))
        again = await request(client, "pi/prompt", {"text": "and now?"})
        assert again["stopReason"] == "stop"
    assert not any(name.startswith("mcp__silent__") for name in declared_tools(llm.requests[0]))
    fail, hang, garbage, big, nowhere, crash, echo, hologram = tool_results(workspace)
    assert fail["isError"] and "the disk is on fire" in fail["content"][0]["text"]
    assert hang["isError"]
    assert hang["content"][0]["text"] == 'MCP server "bad" did not answer within 5 s (calling hang)'
    assert not garbage["isError"] and garbage["content"][0]["text"] == "still here"
    cut = big["content"][0]["text"]
    assert cut.startswith("Warning: truncated output (original token count: ")
    assert "chars truncated…" in cut and "-end" in cut
    full = Path(big["details"]["fullOutputPath"])
    assert full.read_text().endswith("x-end") and f"[Full output: {full}" in cut
    assert (
        nowhere["isError"] and nowhere["content"][0]["text"] == "Tool mcp__nowhere__tool not found"
    )
    assert crash["isError"]
    assert (
        "disconnected (calling crash); it reconnects on the next call"
        in (crash["content"][0]["text"])
    )
    # The next call started the server again.
    assert echo == {**echo, "isError": False}
    assert echo["content"][0]["text"] == "echo: back again"
    assert hologram["isError"]
    assert hologram["content"][0]["text"] == (
        'MCP server "hostile" sent an invalid result (calling hologram): '
        "a content block of the unknown type 'hologram'"
    )


@pytest.mark.options(trusted=False)
async def test_untrusted_workspaces_ask_before_mcp_tools_unless_read_only(workspace, tmp_path):
    servers = {
        "bad": MISBEHAVING,
        "time": {"command": str(TIME_SERVER), "exposure": "direct"},
    }
    asked: list[str] = []

    def answer_deny(client):
        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_question(params: types.ShowMessageRequestParams):
            asked.append(params.message)
            return types.MessageActionItem(title="Deny")

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    llm = ScriptedLLM()
    await llm.start()
    options = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url, "trusted": False}
    try:
        async with another_server(
            workspace, options, isolated_environment(tmp_path), setup=answer_deny
        ) as client:
            llm.enqueue(
                replies.tool_calls(
                    [
                        ("c1", "mcp__bad__echo", {"text": "hi"}),
                        ("c2", "mcp__time__get_current_time", {"timezone": "UTC"}),
                    ]
                ),
                replies.text("ok"),
            )
            await request(client, "pi/prompt", {"text": "go"})
    finally:
        await llm.stop()
    echo, time_result = tool_results(workspace)
    assert asked == [
        'pi wants to use mcp__bad__echo on:\n{"text": "hi"}\n(the workspace is not trusted)'
    ]
    assert echo["isError"] and "the user denied it" in echo["content"][0]["text"]
    assert not time_result["isError"]  # mcp-server-time marks its tools readOnlyHint


async def test_a_permissions_pattern_names_a_servers_tools(workspace, tmp_path):
    servers = {"bad": MISBEHAVING}
    async with serving(
        workspace, tmp_path, servers, permissions={"mcp__bad__*": "ask", "timeoutSeconds": 1}
    ) as (client, llm):
        llm.enqueue(
            replies.tool_calls([("c1", "mcp__bad__echo", {"text": "x"})]), replies.text("ok")
        )
        await request(client, "pi/prompt", {"text": "go"})
    [refused] = tool_results(workspace)
    assert refused["isError"]
    assert "Not run: permission for mcp__bad__echo" in refused["content"][0]["text"]


def test_the_test_servers_are_installed():
    """The npm server comes from ``make install`` (tests/mcp/install.sh); PyPI's from the test
    extra."""
    assert TIME_SERVER.exists()
    assert (
        shutil.which("node")
        or (MCP_DIR.parent / "reference" / "node_modules" / ".bin" / "node").exists()
    )


class Shown:
    def __init__(self, client) -> None:
        self.client = client

    def __iter__(self):
        return iter([params.message for params in self.client.messages])


async def wait_for_state(client, name: str, *states: str) -> dict:
    """The server's status once its state is one of ``states`` (polled: no timing assumed)."""
    while True:
        servers = {s["name"]: s for s in (await request(client, "pi/mcp", {}))["servers"]}
        if servers[name]["state"] in states:
            return servers[name]
        await asyncio.sleep(0.05)


async def test_status_reconnect_disable_and_a_failure_said_once(workspace, tmp_path):
    servers = {
        "bad": MISBEHAVING,
        "broken": {
            "command": sys.executable,
            "args": [
                "-c",
                "import sys; sys.stderr.write('cannot find my config file\\n'); sys.exit(2)",
            ],
        },
        "missing": {"command": "no-such-mcp-server-anywhere"},
    }
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    options = {"model": SCRIPTED_MODEL}
    async with another_server(workspace, options, isolated_environment(tmp_path)) as client:
        shown = Shown(client)  # pytest-lsp's client records window/showMessage
        bad = await wait_for_state(client, "bad", "connected")
        assert bad["source"] == str(agent / "mcp.json")
        assert (bad["scope"], bad["transport"], bad["exposure"]) == ("user", "stdio", "direct")
        assert bad["toolCount"] == 10 and bad["toolExposures"] == {"direct": 10}
        assert bad["stderrTail"] == "misbehaving server starting\n"
        broken = await wait_for_state(client, "broken", "failed")
        assert "cannot find my config file" in broken["stderrTail"]
        assert broken["lastError"]
        missing = await wait_for_state(client, "missing", "failed")
        assert "no-such-mcp-server-anywhere" in missing["lastError"]

        disabled = await request(client, "pi/mcpSetEnabled", {"name": "bad", "enabled": False})
        assert disabled["state"] == "disabled"
        await request(client, "pi/mcpSetEnabled", {"name": "bad", "enabled": True})
        await wait_for_state(client, "bad", "connected")

        await request(client, "pi/mcpReconnect", {"name": "broken"})
        await wait_for_state(client, "broken", "failed")
        with pytest.raises(Exception, match="no MCP server named 'nope'"):
            await request(client, "pi/mcpReconnect", {"name": "nope"})
        while len([text for text in shown if "broken" in text]) < 2:
            await asyncio.sleep(0.05)
    # Each failure is said once, with the stderr tail; the reconnection failed again: once more.
    broken_messages = [text for text in shown if '"broken"' in text]
    assert all("bad" not in text for text in shown)
    assert len(broken_messages) == 2
    assert broken_messages[0].startswith('MCP server "broken" failed to start: ')
    assert broken_messages[0].endswith("cannot find my config file")
    assert len([text for text in shown if '"missing"' in text]) == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def python_server(*arguments: str) -> Iterator[int]:
    """``python ARGUMENTS`` with ``{port}`` replaced by a free port, until it listens there;
    yields the port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *(argument.format(port=port) for argument in arguments)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:  # until it listens
            assert process.poll() is None, f"{arguments[0]} exited"
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait()


@contextlib.contextmanager
def http_server(token: str) -> Iterator[str]:
    """The misbehaving server over streamable HTTP behind a bearer token; yields its URL."""
    server = str(MCP_DIR / "misbehaving_server.py")
    with python_server(server, "--http", "{port}", "--token", token) as port:
        yield f"http://127.0.0.1:{port}/mcp"


async def test_a_streamable_http_server_with_a_header_from_the_environment(workspace, tmp_path):
    with http_server("s3cret") as url:
        servers = {
            "web": {
                "url": url,
                "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"},
                "exposure": "direct",
            },
            "locked": {"type": "streamable-http", "url": url, "exposure": "direct"},
        }
        agent = tmp_path / "agent"
        agent.mkdir()
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        environment = {**isolated_environment(tmp_path), "MCP_TEST_TOKEN": "s3cret"}
        llm = ScriptedLLM()
        await llm.start()
        options = {"model": SCRIPTED_MODEL, "apiBase": llm.base_url}
        try:
            async with another_server(workspace, options, environment) as client:
                llm.enqueue(
                    replies.tool_calls([("c1", "mcp__web__echo", {"text": "over HTTP"})]),
                    replies.text("ok"),
                )
                await request(client, "pi/prompt", {"text": "echo over http"})
                locked = await wait_for_state(client, "locked", "needs-auth")
                shown = list(Shown(client))
        finally:
            await llm.stop()
    [echo] = tool_results(workspace)
    assert echo["content"] == [{"type": "text", "text": "echo: over HTTP"}]
    assert locked["transport"] == "http" and locked["stderrTail"] == ""
    assert "needs a sign-in" in locked["lastError"]
    assert [text for text in shown if '"locked"' in text] == [
        f'MCP server "locked" needs sign-in: {locked["lastError"]}'
    ]


@pytest.mark.skipif(not EVERYTHING.exists(), reason="run tests/mcp/install.sh (make install)")
async def test_the_resource_tools_list_and_read_a_servers_resources(workspace, tmp_path):
    servers = {
        "everything": {
            "command": "node",
            "args": [str(EVERYTHING / "dist" / "index.js"), "stdio"],
            "exposure": "direct",
        }
    }
    architecture = "demo://resource/static/document/architecture.md"
    async with serving(workspace, tmp_path, servers) as (client, llm):
        llm.enqueue(
            replies.tool_calls(
                [
                    ("c1", "list_mcp_resources", {"server": "everything"}),
                    ("c2", "read_mcp_resource", {"server": "everything", "uri": architecture}),
                    ("c3", "read_mcp_resource", {"server": "elsewhere", "uri": architecture}),
                ]
            ),
            replies.text("Read."),
        )
        await request(client, "pi/prompt", {"text": "what resources are there?"})
    declared = declared_tools(llm.requests[0])
    assert {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"} <= set(
        declared
    )
    listing, read, unknown = tool_results(workspace)
    payload = json.loads(listing["content"][0]["text"])
    assert payload["server"] == "everything"
    assert {"server": "everything", "uri": architecture}.items() <= next(
        item for item in payload["resources"] if item["uri"] == architecture
    ).items()
    assert read["content"][0]["text"].startswith("# Everything Server")
    assert read["details"] == {"server": "everything", "tool": "read_mcp_resource"}
    assert unknown["isError"]
    assert unknown["content"][0]["text"] == (
        'MCP server "elsewhere" has no resources. Servers with resources: everything'
    )


async def test_tool_search_loads_a_deferred_tool_which_stays_declared_on_the_branch(
    workspace, tmp_path
):
    servers = {
        "bad": {**MISBEHAVING, "exposure": "deferred"},
        "time": {"command": str(TIME_SERVER)},
    }
    async with serving(workspace, tmp_path, servers) as (client, llm):
        # The servers connect in the background; the search waits for nothing, so wait here.
        await wait_for_state(client, "bad", "connected")
        await wait_for_state(client, "time", "connected")
        llm.enqueue(
            replies.tool_calls([("c1", "tool_search", {"query": "echo the text back"})]),
            replies.tool_calls([("c2", "mcp__bad__echo", {"text": "found"})]),
            replies.text("Found and used it."),
        )
        await request(client, "pi/prompt", {"text": "find an echo tool"})
        llm.enqueue(replies.text("Still loaded."))
        await request(client, "pi/prompt", {"text": "and now?"})
    first, after_search, _, next_prompt = (declared_tools(r) for r in llm.requests)
    assert "tool_search" in first and not any(name.startswith("mcp__") for name in first)
    assert "mcp__bad__echo" in after_search and "mcp__bad__echo" in next_prompt
    search, echo = tool_results(workspace)
    assert search["details"]["loaded"][0] == "mcp__bad__echo"
    assert search["content"][0]["text"].startswith("Loaded ")
    assert "- mcp__bad__echo: Echo the text back" in search["content"][0]["text"]
    assert echo["content"] == [{"type": "text", "text": "echo: found"}]


async def test_progress_notifications_start_the_timeout_over(workspace, tmp_path):
    # 6 steps 1 s apart: 6 s in all, longer than the server's timeout of 4 s, but never 4 s
    # without progress.
    servers = {"bad": {**MISBEHAVING, "timeout": 4}}
    async with serving(workspace, tmp_path, servers) as (client, llm):
        # The timeout also bounds the server's start (as in pi): on a loaded machine a start may
        # miss it, and a reconnection starts it again.
        while (await wait_for_state(client, "bad", "connected", "failed"))["state"] == "failed":
            await request(client, "pi/mcpReconnect", {"name": "bad"})
        llm.enqueue(
            replies.tool_calls([("c1", "mcp__bad__slow", {"steps": 6, "pause": 1.0})]),
            replies.text("ok"),
        )
        await request(client, "pi/prompt", {"text": "go slowly"})
    [slow] = tool_results(workspace)
    assert not slow["isError"], slow
    assert slow["content"] == [{"type": "text", "text": "done after 6 steps"}]


async def test_a_changed_tool_list_is_followed(workspace, tmp_path):
    servers = {"bad": MISBEHAVING}
    async with serving(workspace, tmp_path, servers) as (client, llm):
        llm.enqueue(replies.tool_calls([("c1", "mcp__bad__vanish", {})]), replies.text("gone"))
        await request(client, "pi/prompt", {"text": "make it vanish"})
        # The server announced the change; its list is read again.
        while (await wait_for_state(client, "bad", "connected"))["toolCount"] != 9:
            await asyncio.sleep(0.05)
        llm.enqueue(replies.tool_calls([("c2", "mcp__bad__vanish", {})]), replies.text("ok"))
        await request(client, "pi/prompt", {"text": "again"})
    vanished, again = tool_results(workspace)
    assert vanished["content"] == [{"type": "text", "text": "gone"}]
    assert "mcp__bad__vanish" in declared_tools(llm.requests[0])
    assert "mcp__bad__vanish" not in declared_tools(llm.requests[2])
    assert again["isError"] and again["content"][0]["text"] == "Tool mcp__bad__vanish not found"


async def test_server_log_messages_go_to_pis_mcp_log(workspace, tmp_path):
    servers = {"bad": MISBEHAVING}
    async with serving(workspace, tmp_path, servers) as (client, llm):
        llm.enqueue(
            replies.tool_calls([("c1", "mcp__bad__log", {"text": "disk almost full\nsee df"})]),
            replies.text("ok"),
        )
        await request(client, "pi/prompt", {"text": "log something"})
    log = (tmp_path / "agent" / "mcp.log").read_text()
    # pi 1.6's format: time, [server], level, logger, the message with continuation lines indented.
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[bad\] warning misbehaving: "
        r"disk almost full\n    see df\n",
        log,
    ), log
