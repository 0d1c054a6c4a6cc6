"""stdout carries the LSP stream and nothing else, even with litellm logging at INFO (it writes
those records to stdout) — a stray line there breaks strict clients such as Neovim's."""

from __future__ import annotations

import asyncio
import json
import sys

from pi_lsp.scripted_llm import replies
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.conftest import SCRIPTED_MODEL, server_environment


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_frame(stdout: asyncio.StreamReader) -> dict:
    """One message, read strictly: anything that is not an LSP header fails the test."""
    header = await stdout.readuntil(b"\r\n\r\n")
    fields = dict(line.split(": ", 1) for line in header.decode().strip().split("\r\n"))
    assert set(fields) <= {"Content-Length", "Content-Type"}, f"not an LSP header: {header!r}"
    return json.loads(await stdout.readexactly(int(fields["Content-Length"])))


async def answer_of(stdout: asyncio.StreamReader, request_id: int) -> dict:
    while True:
        message = await read_frame(stdout)
        if message.get("id") == request_id and "method" not in message:
            return message


async def test_a_whole_turn_writes_nothing_but_lsp_frames_to_stdout(workspace):
    async with ScriptedLLM((replies.text("All clean."),)) as scripted_llm:
        # Through litellm: the direct path for OpenAI-compatible endpoints would never load it.
        environment = {
            **server_environment(),
            "LITELLM_LOG": "INFO",
            "PI_LSP_LLM_TRANSPORT": "litellm",
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "pi_lsp",
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            options = {"model": SCRIPTED_MODEL, "apiBase": scripted_llm.base_url, "autoName": False}
            process.stdin.write(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "processId": None,
                            "rootUri": workspace.as_uri(),
                            "capabilities": {},
                            "initializationOptions": options,
                        },
                    }
                )
            )
            initialized = await asyncio.wait_for(answer_of(process.stdout, 1), 30)
            assert initialized["result"]["serverInfo"]["name"] == "pi-lsp"
            process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
            process.stdin.write(
                frame({"jsonrpc": "2.0", "id": 2, "method": "pi/prompt", "params": {"text": "hi"}})
            )
            answer = await asyncio.wait_for(answer_of(process.stdout, 2), 60)
            assert answer["result"]["stopReason"] == "stop"
            process.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
            await asyncio.wait_for(answer_of(process.stdout, 3), 30)
            process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
            assert (
                await asyncio.wait_for(process.stdout.read(), 30) == b""
            )  # nothing after the last frame
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
