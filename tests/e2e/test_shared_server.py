"""The shared server (``pi-lsp --shared``): later starts forward their stdio to one server process,
which serves each connection as a client of its own.

Every test has its own runtime directory (``XDG_RUNTIME_DIR``), so its own shared server, and a
short idle time so the server leaves once its clients have.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

from pi_lsp.client import PiClient, isolated_environment
from pi_lsp.scripted_llm import ScriptedLLM, replies
from pi_lsp.transport import shared_address
from tests.reliability.raw_lsp import RawLsp

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def environment(tmp_path: Path):
    # Short: a socket's path must fit in 107 bytes, which a pytest-xdist tmp_path may not leave.
    runtime = Path(tempfile.mkdtemp(prefix="pi-lsp-run-"))
    environment = isolated_environment(tmp_path / "home")
    environment.update(
        XDG_RUNTIME_DIR=str(runtime),
        PI_LSP_SHARED="1",
        PI_LSP_SHARED_IDLE_SECONDS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")])),
    )
    yield environment
    shutil.rmtree(runtime, ignore_errors=True)


def socket_of(environment: dict[str, str]) -> Path:
    return (
        Path(environment["XDG_RUNTIME_DIR"])
        / "pi-lsp"
        / (f"shared-{shared_address.environment_key(environment)}.sock")
    )


def shared_server_pids(environment: dict[str, str]) -> set[int]:
    """The shared servers running on this test's runtime directory."""
    runtime = f"XDG_RUNTIME_DIR={environment['XDG_RUNTIME_DIR']}".encode()
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                if b"--serve-shared" in command and runtime in (entry / "environ").read_bytes():
                    pids.add(int(entry.name))
            except OSError:
                continue
    return pids


async def start(environment: dict[str, str], workspace: Path, llm: ScriptedLLM) -> PiClient:
    workspace.mkdir(parents=True, exist_ok=True)
    client = PiClient("shared-test", timeout=120)
    await client.start_server(
        (sys.executable, "-m", "pi_lsp", "--log-file", str(workspace.parent / "log")),
        env=environment,
        cwd=workspace,
    )
    options = {"model": "openai/scripted", "apiBase": llm.base_url, "thinkingLevel": "off"}
    options["autoName"] = False
    await client.initialize_workspace(workspace, options)
    return client


async def wait_until(condition, seconds: float = 60.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")


async def test_two_clients_share_one_process_with_separate_workspaces(tmp_path, environment):
    async with ScriptedLLM() as llm:
        first = await start(environment, tmp_path / "one", llm)
        servers = shared_server_pids(environment)
        second = await start(environment, tmp_path / "two", llm)
        assert shared_server_pids(environment) == servers and len(servers) == 1
        path = socket_of(environment)
        assert (path.stat().st_mode & 0o777) == 0o600
        llm.enqueue(replies.text("one's answer"), replies.text("two's answer"))
        await first.request("pi/prompt", {"text": "hello from one"})
        await second.request("pi/prompt", {"text": "hello from two"})
        first_state = await first.request("pi/state", {})
        second_state = await second.request("pi/state", {})
        assert Path(first_state["path"]).is_relative_to(tmp_path / "one")
        assert Path(second_state["path"]).is_relative_to(tmp_path / "two")
        first_text = Path(first_state["path"]).read_text()
        assert "hello from one" in first_text and "hello from two" not in first_text
        # One client leaving does not end the other's server.
        await first.close(timeout=30)
        llm.enqueue(replies.text("still here"))
        result = await second.request("pi/prompt", {"text": "are you there"})
        assert result["stopReason"] == "stop"
        await second.close(timeout=30)
    # No client left: the server exits after its idle time and removes its socket.
    await wait_until(lambda: not shared_server_pids(environment) & servers and not path.exists())


async def test_each_client_gets_only_its_own_log_records(tmp_path, environment):
    async with ScriptedLLM() as llm:
        first = await start(environment, tmp_path / "one", llm)
        second = await start(environment, tmp_path / "two", llm)
        assert len(shared_server_pids(environment)) == 1
        # Each logs "the editor's API keys: <providers>" on the connection it came from.
        first.protocol.notify("pi/setCredentials", {"credentials": {"alphaprovider": "a-key"}})
        second.protocol.notify("pi/setCredentials", {"credentials": {"betaprovider": "b-key"}})
        await first.request("pi/state", {})
        await second.request("pi/state", {})
        await wait_until(
            lambda: (
                any("alphaprovider" in text for text in first.log_messages)
                and any("betaprovider" in text for text in second.log_messages)
            )
        )
        assert not any("betaprovider" in text for text in first.log_messages)
        assert not any("alphaprovider" in text for text in second.log_messages)
        # Each also saw its own start, and not the other's workspace.
        assert not any(str(tmp_path / "two") in text for text in first.log_messages)
        assert not any(str(tmp_path / "one") in text for text in second.log_messages)
        await first.close(timeout=30)
        await second.close(timeout=30)


async def test_a_socket_left_behind_is_replaced(tmp_path, environment):
    path = socket_of(environment)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))  # bound, never listening, then abandoned: nothing will answer
    stale.close()
    path.chmod(0o600)
    async with ScriptedLLM() as llm:
        client = await start(environment, tmp_path / "one", llm)
        llm.enqueue(replies.text("served"))
        assert (await client.request("pi/prompt", {"text": "hi"}))["stopReason"] == "stop"
        assert shared_server_pids(environment)
        await client.close(timeout=30)


async def test_an_open_runtime_directory_is_refused_and_the_editor_served_alone(
    tmp_path, environment
):
    runtime = Path(environment["XDG_RUNTIME_DIR"])
    (runtime / "pi-lsp").mkdir()
    (runtime / "pi-lsp").chmod(0o755)
    async with ScriptedLLM() as llm:
        client = await start(environment, tmp_path / "one", llm)
        llm.enqueue(replies.text("served alone"))
        assert (await client.request("pi/prompt", {"text": "hi"}))["stopReason"] == "stop"
        assert list((runtime / "pi-lsp").glob("*.sock")) == []
        assert shared_server_pids(environment) == set()
        process = client.process
        await client.close(timeout=30)
    assert process is not None and process.stderr is not None
    said = await process.stderr.read()
    assert b"not sharing a server" in said and b"open to other users" in said


async def test_an_editor_gone_ends_its_connection_only(tmp_path, environment):
    from lsprotocol import types

    editor = await asyncio.create_subprocess_exec("sleep", "600")
    async with ScriptedLLM() as llm:
        staying = await start(environment, tmp_path / "staying", llm)
        leaving = PiClient("shared-test", timeout=120)
        (tmp_path / "leaving").mkdir()
        await leaving.start_server(
            (sys.executable, "-m", "pi_lsp"), env=environment, cwd=tmp_path / "leaving"
        )
        await leaving.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                process_id=editor.pid,
                root_uri=(tmp_path / "leaving").as_uri(),
            )
        )
        leaving.initialized(types.InitializedParams())
        editor.kill()
        await editor.wait()
        assert leaving.process is not None
        # The server closes that connection, and its forwarder ends with it.
        await asyncio.wait_for(leaving.process.wait(), 60)
        llm.enqueue(replies.text("still served"))
        result = await staying.request("pi/prompt", {"text": "hi"})
        assert result["stopReason"] == "stop"
        assert len(shared_server_pids(environment)) == 1
        await staying.close(timeout=30)


async def test_one_client_shutting_down_leaves_the_others_commands_running(tmp_path, environment):
    async with ScriptedLLM() as llm:
        leaving = await start(environment, tmp_path / "leaving", llm)
        working = await start(environment, tmp_path / "working", llm)
        started, finished = tmp_path / "started", tmp_path / "finished"
        command = f"touch {started}; sleep 2; echo done > {finished}"
        llm.enqueue(
            replies.tool_calls([("call-1", "bash", {"command": command})]), replies.text("ok")
        )
        turn = asyncio.ensure_future(working.request("pi/prompt", {"text": "run it"}))
        await wait_until(started.exists)
        await leaving.close(timeout=30)  # shutdown and exit, while the command runs
        assert (await turn)["stopReason"] == "stop"
        assert finished.read_text() == "done\n"
        await working.close(timeout=30)


async def test_a_frame_of_the_wrong_length_costs_a_shared_connection_that_frame_only(
    environment, tmp_path: Path
):
    """As over stdio and TCP (``tests/e2e/test_framing.py``): the shared server's connection reads
    the next whole frame after a frame whose Content-Length is short, and answers it."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    raw = await RawLsp.start([sys.executable, "-m", "pi_lsp"], environment)
    try:
        initialize = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        await raw.request(0, "initialize", initialize, 60)
        raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "pi/state"}).encode()
        raw.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) - 3) + body)
        await raw.drain()
        answer = await raw.request(2, "pi/state", {}, 60)
        assert "result" in answer
        assert [error["error"]["code"] for error in raw.null_id_errors] == [-32700]
    finally:
        raw.process.kill()
        await raw.process.wait()
