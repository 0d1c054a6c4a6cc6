"""The editor goes away in the middle of a turn: its pipe to the server closes (stdin at EOF), or
the editor process named in ``initialize``'s ``processId`` dies while the pipe stays open.

Either way, during streaming and during a running command, the partial answer (or the command's
aborted result) is saved, the command's process is killed and the server exits within 5 s.
The four cases run side by side, each with its own server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types

from pi_lsp.client import PiClient, isolated_environment
from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM

from .figures import record_figure
from .servers import make_workspace, server_options

EXIT_WITHIN_S = 5.0
ANSWER = " ".join(f"word{number}" for number in range(60))


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


async def start(home: Path, workspace: Path, options: dict, editor_pid: int | None) -> PiClient:
    client = PiClient(timeout=300)
    await client.start_server(env=isolated_environment(home))
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        process_id=editor_pid,
        initialization_options=options,
    )
    await client.initialize_async(params)
    client.initialized(types.InitializedParams())
    return client


def session_entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def one_case(tmp_path: Path, how: str, during: str) -> float:
    async with ScriptedLLM() as model:
        return await case_with_model(tmp_path, model, how, during)


async def case_with_model(tmp_path: Path, model: ScriptedLLM, how: str, during: str) -> float:
    root = tmp_path / f"{how}-{during}".replace(" ", "-")
    workspace = make_workspace(root)
    pid_file = root / "command.pid"
    editor = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(600)"
    )
    client = await start(
        root / "home",
        workspace,
        server_options(model.base_url, workspace),
        editor.pid if how == "editor dies" else None,
    )
    try:
        session = await client.request("pi/newSession", {})
        if during == "streaming":
            model.enqueue(replies.slow_text(ANSWER, chunks=60, chunk_delay=0.2))
        else:
            command = f"echo $$ > {pid_file}; exec sleep 300"
            model.enqueue(replies.tool_calls([("call-1", "bash", {"command": command})]))
        prompt = asyncio.ensure_future(client.request("pi/prompt", {"text": f"{how} {during}"}))
        await turn_under_way(client, prompt, pid_file if during == "command" else None, how)
        command_pid = int(pid_file.read_text()) if during == "command" else None
        gone_at = time.monotonic()
        if how == "stdin closed":
            client.process.stdin.close()
        else:
            editor.kill()
            await editor.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.process.wait(), EXIT_WITHIN_S)
        exit_seconds = time.monotonic() - gone_at
        assert client.process.returncode is not None, (
            f"{how}, {during}: the server is still running"
        )
        prompt.cancel()
    finally:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()
        if editor.returncode is None:
            editor.kill()
            await editor.wait()
        client._stopping.set()
    entries = session_entries(Path(session["path"]))
    messages = [entry["message"] for entry in entries if entry["type"] == "message"]
    if command_pid is None:
        answer = messages[-1]
        assert answer["role"] == "assistant" and answer["stopReason"] == "aborted"
        text = "".join(part.get("text", "") for part in answer["content"])
        assert text and ANSWER.startswith(text) and text != ANSWER
    else:
        result = messages[-1]
        assert result["role"] == "toolResult" and result["toolCallId"] == "call-1"
        assert "abort" in json.dumps(result["content"]).lower()
        deadline = time.monotonic() + 2
        while is_running(command_pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not is_running(command_pid), f"{how}: the command outlived the server"
    return exit_seconds


async def turn_under_way(
    client: PiClient, prompt: asyncio.Future, pid_file: Path | None, how: str
) -> None:
    """Wait until the answer streams (or, with ``pid_file``, the command runs)."""
    waited = time.monotonic()
    while True:
        if pid_file is not None and pid_file.exists() and pid_file.read_text().strip():
            return
        if pid_file is None and "text_delta" in client.events.types():
            return
        if prompt.done() or time.monotonic() - waited > 300:
            raise AssertionError(f"{how}: the turn never got going: {client.events.types()}")
        await asyncio.sleep(0.05)


@pytest.mark.timeout(180)
async def test_the_server_saves_kills_and_exits_when_its_client_disappears(tmp_path):
    cases = [
        (how, during)
        for how in ("stdin closed", "editor dies")
        for during in ("streaming", "command")
    ]
    seconds = await asyncio.gather(*(one_case(tmp_path, how, during) for how, during in cases))
    record_figure(
        "client disappears mid-turn",
        cases=len(cases),
        exit_seconds={
            f"{how}, {during}": round(took, 2)
            for (how, during), took in zip(cases, seconds, strict=True)
        },
        partial_answers_lost=0,
        commands_left_running=0,
    )
