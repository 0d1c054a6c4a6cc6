"""``pi-lsp --tcp`` hands the agent only to the client that has the token, on loopback only."""

from __future__ import annotations

import asyncio
import stat
import sys

import pytest
from pygls.exceptions import JsonRpcException

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.conftest import SCRIPTED_MODEL, request, server_environment
from tests.e2e.tcp_support import (
    RawConnection,
    connect_client,
    initialize_message,
    start_tcp_server,
    stop_tcp_server,
    tcp_server,
)

UNAUTHORIZED = -32030
ALREADY_SERVING = -32031


async def refused(server, workspace, message: dict) -> dict:
    """Send ``message`` first on a new connection; return the error answer, checking it closed."""
    connection = await RawConnection.open(server)
    try:
        connection.send(message)
        answer = await connection.receive()
        assert "result" not in answer, answer
        assert await connection.is_closed_by_server()
        return answer["error"]
    finally:
        connection.close()


async def test_only_the_client_with_the_token_is_served_before_and_while_others_are_refused(
    tmp_path, workspace
):
    async with ScriptedLLM() as scripted_llm, tcp_server(tmp_path) as server:
        options = {"model": SCRIPTED_MODEL, "apiBase": scripted_llm.base_url, "autoName": False}
        idle = await RawConnection.open(server)  # connected, says nothing, must not block anyone
        without = await refused(server, workspace, initialize_message(workspace, options))
        assert without["code"] == UNAUTHORIZED and "token is missing" in without["message"]
        wrong = await refused(
            server, workspace, initialize_message(workspace, {**options, "token": "guess"})
        )
        assert wrong["code"] == UNAUTHORIZED and "token is wrong" in wrong["message"]
        no_options = await refused(server, workspace, initialize_message(workspace, None))
        assert no_options["code"] == UNAUTHORIZED
        prompt_first = {"jsonrpc": "2.0", "id": 5, "method": "pi/prompt", "params": {"text": "hi"}}
        skipped = await refused(server, workspace, prompt_first)
        assert "must be initialize" in skipped["message"]
        assert scripted_llm.requests == []  # nothing a refused client sent was served

        client = await connect_client(server, workspace, options, server.token)
        scripted_llm.enqueue(replies.text("Served over TCP."))
        first = await request(client, "pi/prompt", {"text": "hello"})
        assert first["stopReason"] == "stop"

        # Strangers arriving while the client is served are refused and change nothing for it.
        meanwhile = await refused(
            server, workspace, initialize_message(workspace, {"token": server.token[:-1]})
        )
        assert meanwhile["code"] == UNAUTHORIZED
        second = await refused(
            server, workspace, initialize_message(workspace, {"token": server.token})
        )
        assert second["code"] == ALREADY_SERVING and "already serves a client" in second["message"]
        scripted_llm.enqueue(replies.text("Still yours."))
        again = await request(client, "pi/prompt", {"text": "still there?"})
        assert again["sessionId"] == first["sessionId"] and again["stopReason"] == "stop"
        assert len(scripted_llm.requests) == 2

        await client.shutdown_session()
        await client.stop()
        assert await server.wait_for_exit() == 0  # as over stdio, the server leaves with its client
        assert await idle.is_closed_by_server()
        idle.close()


async def test_a_refused_client_does_not_stop_the_server_from_serving_the_right_one_later(
    tmp_path, workspace
):
    async with tcp_server(tmp_path) as server:
        for _ in range(3):
            stranger = await RawConnection.open(server)
            stranger.send(initialize_message(workspace, {"token": "nope"}))
            await stranger.receive()
            stranger.close()
        half_open = await RawConnection.open(server)
        half_open.writer.write(b"Content-Length: 999\r\n\r\n{")  # and then hangs up
        half_open.close()
        client = await connect_client(server, workspace, {}, server.token)
        state = await request(client, "pi/state", {})
        assert state["sessionId"]
        with pytest.raises(JsonRpcException) as raised:
            await request(client, "pi/openSession", {"path": "../outside.jsonl"})
        assert raised.value.code == -32602
        await client.shutdown_session()
        await client.stop()


async def test_any_host_but_loopback_is_refused_without_allow_remote(tmp_path, workspace):
    for host in ("0.0.0.0", "[::]"):
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "pi_lsp",
            "--tcp",
            f"{host}:0",
            "--token-file",
            str(tmp_path / "never.token"),
            env=server_environment(),
            stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 1
        message = stderr.decode()
        assert "is not a loopback address" in message and "--allow-remote" in message
        assert not (tmp_path / "never.token").exists()

    async with tcp_server(tmp_path, "--allow-remote", address="0.0.0.0:0") as server:
        assert any("warning: --allow-remote" in line for line in server.stderr)
        server.host = "127.0.0.1"
        without = await refused(server, workspace, initialize_message(workspace, {}))
        assert without["code"] == UNAUTHORIZED  # remote or not, the token is required
        client = await connect_client(server, workspace, {}, server.token)
        assert (await request(client, "pi/state", {}))["sessionId"]
        server.process.terminate()  # a launcher stopping the server
        assert await server.wait_for_exit() == 0
        assert not server.token_file.exists()
        await client.stop()


async def test_the_token_file_is_private_and_the_token_never_reaches_the_log(tmp_path, workspace):
    server = await start_tcp_server(tmp_path, token_file=False)  # the default location
    try:
        token = server.token
        assert server.token_file.name == f"tcp-{server.port}.token"
        assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
        assert len(token) >= 32
        await refused(server, workspace, initialize_message(workspace, {"token": "wrong"}))
        async with ScriptedLLM((replies.text("Logged, not leaked."),)) as scripted_llm:
            options = {"model": SCRIPTED_MODEL, "apiBase": scripted_llm.base_url, "autoName": False}
            client = await connect_client(server, workspace, options, token)
            await request(client, "pi/prompt", {"text": "hello"})
            await client.shutdown_session()
            await client.stop()
        assert await server.wait_for_exit() == 0
    finally:
        await stop_tcp_server(server)
    log = server.log_file.read_text()
    # The debug log was written, with the initialize params pygls logs in full: minus the token.
    assert "refused a TCP connection" in log and "Language server initialized" in log
    assert "initialization_options={'model': 'openai/scripted'" in log
    assert token not in log
    assert token not in "\n".join(server.stderr)
    assert not server.token_file.exists()  # removed when the server stopped
