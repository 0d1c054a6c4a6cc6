"""A raw LSP connection to a server process: frames written and read byte for byte.

The fuzz tests need what a real client library would refuse to send: bodies that are not JSON,
broken headers, requests nested thousands deep. ``RawLsp`` writes any bytes, frames JSON-RPC
messages itself and reads the server's frames back (notifications and server requests included,
which it answers with null so the server never waits on it). Answers with a null id (a Parse
error for a body whose id could not be read) are kept apart: they cannot be matched to the
message they answer, only counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pi_lsp.client import STREAM_LIMIT


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawLsp:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.responses: dict[Any, dict] = {}
        self.null_id_errors: list[dict] = []
        self._arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read_frames())

    @classmethod
    async def start(cls, command: list[str], env: dict[str, str]) -> RawLsp:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=STREAM_LIMIT,
        )
        return cls(process)

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: dict | bytes) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.send_bytes(frame(body))

    async def request(self, request_id: Any, method: str, params: Any, timeout: float = 30) -> dict:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.answer(request_id, timeout)

    async def answer(self, request_id: Any, timeout: float = 30) -> dict:
        await self.wait_until(lambda: request_id in self.responses, timeout)
        return self.responses.pop(request_id)

    async def wait_until(self, condition: Callable[[], bool], timeout: float) -> None:
        """Wait until what has arrived satisfies ``condition``; TimeoutError after ``timeout``
        seconds, ConnectionError if the server closes its end first."""

        async def arrived() -> None:
            while not condition():
                if self._reader.done():
                    raise ConnectionError("the server closed the connection")
                self._arrived.clear()
                await self._arrived.wait()

        await asyncio.wait_for(arrived(), timeout)

    async def drain(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.drain()

    async def _read_frames(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                length = None
                while True:
                    line = await stdout.readline()
                    if not line:
                        return
                    if line == b"\r\n":
                        break
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await stdout.readexactly(length or 0)
                message = json.loads(body)
                if "method" in message and "id" in message:  # a request from the server
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif "method" not in message:
                    if message.get("id") is None:  # an answer to a message whose id was unreadable
                        self.null_id_errors.append(message)
                    else:
                        self.responses[message["id"]] = message
                self._arrived.set()
        finally:
            self._arrived.set()
