"""The real ``pi-lsp --tcp`` server for e2e tests: started on a free loopback port, its token file,
its log, pytest-lsp clients connected to it, and raw connections that speak JSON-RPC by hand."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import make_client, server_environment

LISTENING = re.compile(r"^pi-lsp: listening on (?P<host>.+):(?P<port>\d+)$")
TOKEN_FILE = re.compile(r"^pi-lsp: token file: (?P<path>.+)$")


@attrs.define
class TcpServer:
    process: asyncio.subprocess.Process
    host: str
    port: int
    token_file: Path
    log_file: Path
    stderr: list[str]
    """Every stderr line so far (the announcement first)."""

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    async def wait_for_exit(self, timeout: float = 15.0) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)


async def start_tcp_server(
    tmp_path: Path, *arguments: str, address: str = "127.0.0.1:0", token_file: bool = True
) -> TcpServer:
    """``pi-lsp --tcp address`` with a debug log; returns once it announced port and token file."""
    log_file = tmp_path / "pi-lsp-tcp.log"
    command = [sys.executable, "-m", "pi_lsp", "--tcp", address, "--log-file", str(log_file), "-v"]
    if token_file:
        command += ["--token-file", str(tmp_path / "pi-lsp.token")]
    process = await asyncio.create_subprocess_exec(
        *command, *arguments, env=server_environment(), stderr=asyncio.subprocess.PIPE
    )
    stderr: list[str] = []
    listening = token_path = None
    while listening is None or token_path is None:
        line = await asyncio.wait_for(process.stderr.readline(), 30)
        if not line:
            raise AssertionError(f"pi-lsp --tcp exited before listening: {stderr}")
        stderr.append(line.decode().rstrip("\n"))
        listening = listening or LISTENING.match(stderr[-1])
        token_path = token_path or TOKEN_FILE.match(stderr[-1])
    asyncio.get_running_loop().create_task(_collect(process.stderr, stderr))
    return TcpServer(
        process,
        listening["host"],
        int(listening["port"]),
        Path(token_path["path"]),
        log_file,
        stderr,
    )


async def _collect(stream: asyncio.StreamReader, lines: list[str]) -> None:
    while line := await stream.readline():
        lines.append(line.decode().rstrip("\n"))


async def stop_tcp_server(server: TcpServer) -> None:
    if server.process.returncode is None:
        server.process.terminate()
    await server.wait_for_exit()


@contextlib.asynccontextmanager
async def tcp_server(tmp_path: Path, *arguments: str, **options: Any):
    server = await start_tcp_server(tmp_path, *arguments, **options)
    try:
        yield server
    finally:
        await stop_tcp_server(server)


async def connect_client(
    server: TcpServer, workspace: Path, options: dict[str, Any], token: str | None
) -> LanguageClient:
    """A pytest-lsp client on the server's port, initialized with ``token`` (when given)."""
    client = make_client()
    await client.start_tcp(server.host, server.port)
    initialization_options = dict(options)
    initialization_options.setdefault("autoName", False)  # as the stdio fixtures
    if token is not None:
        initialization_options["token"] = token
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(apply_edit=True)
            ),
            root_uri=workspace.as_uri(),
            initialization_options=initialization_options,
        )
    )
    return client


class RawConnection:
    """A TCP connection writing and reading LSP frames itself: exactly what a stranger sees."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, server: TcpServer) -> RawConnection:
        return cls(*await asyncio.open_connection(server.host, server.port))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self, timeout: float = 15.0) -> dict[str, Any]:
        header = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        length = int(re.search(rb"Content-Length: (\d+)", header)[1])
        return json.loads(await self.reader.readexactly(length))

    async def is_closed_by_server(self, timeout: float = 15.0) -> bool:
        """Whether the server closed the connection (nothing more arrives, end of stream)."""
        try:
            rest = await asyncio.wait_for(self.reader.read(), timeout)
        except ConnectionError:
            return True
        return rest == b""

    def close(self) -> None:
        self.writer.close()


def initialize_message(
    workspace: Path, options: dict[str, Any] | None, request_id: int = 1
) -> dict:
    params: dict[str, Any] = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    if options is not None:
        params["initializationOptions"] = options
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
