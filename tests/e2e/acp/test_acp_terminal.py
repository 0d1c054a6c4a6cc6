"""``bash`` in the ACP client's terminal, end to end: a client that offers ``terminal/*`` (and
runs the commands as a client would, in processes of its own) in front of the real
``pi-lsp acp`` process and the scripted model."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

import pytest
import pytest_asyncio
from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    TerminalOutputResponse,
    ToolCallProgress,
    WaitForTerminalExitResponse,
)

from pi_lsp.scripted_llm import replies
from tests.e2e.acp.support import RecordingClient, acp_agent, saved_tool_results, start_streaming

pytestmark = pytest.mark.asyncio(loop_scope="module")


class TerminalClient(RecordingClient):
    """Runs each ``terminal/create`` as a process of its own, recording the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.processes: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytearray] = {}
        self.readers: dict[str, asyncio.Task] = {}
        self.calls: list[tuple[str, str]] = []
        self.created: list[dict[str, Any]] = []

    async def create_terminal(self, command, session_id, args=None, cwd=None, **kwargs):
        terminal_id = f"term-{len(self.created) + 1}"
        self.created.append({"command": command, "args": args, "cwd": cwd, **kwargs})
        self.calls.append(("create", terminal_id))
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[terminal_id] = process
        self.outputs[terminal_id] = bytearray()

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                self.outputs[terminal_id] += chunk

        self.readers[terminal_id] = asyncio.ensure_future(read())
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        self.calls.append(("output", terminal_id))
        return TerminalOutputResponse(
            output=self.outputs[terminal_id].decode(errors="replace"), truncated=False
        )

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        self.calls.append(("wait", terminal_id))
        code = await self.processes[terminal_id].wait()
        await self.readers[terminal_id]
        if code < 0:
            return WaitForTerminalExitResponse(signal=signal.Signals(-code).name)
        return WaitForTerminalExitResponse(exit_code=code)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.calls.append(("kill", terminal_id))
        os.killpg(self.processes[terminal_id].pid, signal.SIGKILL)
        await self.processes[terminal_id].wait()
        await self.readers[terminal_id]

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.calls.append(("release", terminal_id))

    def reset(self) -> None:
        super().reset()
        self.calls.clear()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def warm(scripted_llm, tmp_path_factory):
    client = TerminalClient()
    capabilities = ClientCapabilities(terminal=True)
    async with acp_agent(
        scripted_llm, tmp_path_factory.mktemp("acp-terminal"), client, capabilities
    ) as (connection, _, _):
        yield connection, client


async def test_a_command_runs_in_the_clients_terminal_and_its_output_is_the_result(
    scripted_llm, workspace, agent
):
    connection, client = agent
    command = "echo made > made.txt; echo line-1; echo oops >&2; exit 3"
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": command})]), replies.text("Exit 3.")
    )
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    answer = await connection.prompt(session_id=session.session_id, prompt=[text_block("run")])
    assert answer.stop_reason == "end_turn"
    (created,) = client.created
    assert created["args"] == ["-c", command] and created["cwd"] == str(workspace)
    assert created["output_byte_limit"] == 10 * 1024 * 1024
    assert (workspace / "made.txt").read_text() == "made\n"
    assert [call for call, _ in client.calls] == ["create", "wait", "output", "release"]
    updates = [u for u in client.of_type(ToolCallProgress) if u.tool_call_id == "call-1"]
    assert all(u.content[0].type == "terminal" for u in updates)
    assert {u.content[0].terminal_id for u in updates} == {"term-1"}
    assert updates[-1].status == "failed"
    (result,) = saved_tool_results(workspace)
    assert result["content"][0]["text"] == "line-1\noops\n\n\nCommand exited with code 3"
    assert result["details"]["exitCode"] == 3 and result["details"]["terminalId"] == "term-1"
    sent = json.dumps(scripted_llm.requests[-1]["messages"])
    assert "Command exited with code 3" in sent


async def test_a_timeout_kills_the_terminal(scripted_llm, workspace, agent):
    connection, client = agent
    scripted_llm.enqueue(
        replies.tool_calls([("call-1", "bash", {"command": "echo start; sleep 30", "timeout": 1})]),
        replies.text("It hung."),
    )
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    await asyncio.wait_for(
        connection.prompt(session_id=session.session_id, prompt=[text_block("run")]), 20
    )
    assert [call for call, _ in client.calls] == ["create", "wait", "kill", "output", "release"]
    (result,) = saved_tool_results(workspace)
    assert result["content"][0]["text"] == "start\n\n\nCommand timed out after 1 seconds"
    assert result["details"]["timedOut"] is True


async def test_cancel_kills_the_terminal_and_keeps_its_output(scripted_llm, workspace, agent):
    connection, client = agent
    command = "echo started; sleep 30; echo never"
    scripted_llm.enqueue(replies.tool_calls([("call-1", "bash", {"command": command})], text="Go."))
    session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    running = await start_streaming(connection, client, session.session_id, "run")
    while b"started" not in client.outputs.get(f"term-{len(client.created)}", b""):
        await asyncio.sleep(0.05)
    await connection.cancel(session_id=session.session_id)
    assert (await asyncio.wait_for(running, 20)).stop_reason == "cancelled"
    terminal_id = f"term-{len(client.created)}"
    assert [call for call, _ in client.calls][-3:] == ["kill", "output", "release"]
    assert client.processes[terminal_id].returncode == -signal.SIGKILL
    (result,) = saved_tool_results(workspace)
    assert result["content"][0]["text"] == "started\n\n\nCommand aborted"
    assert result["isError"] is True
