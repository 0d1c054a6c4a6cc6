"""``pi-lsp acp`` driven line by line, as a client written from ACP's schema sees it.

The SDK's client side (``support.py``) dispatches each message to a task of its own, so the order
pi-lsp writes its lines in is lost there; here every line pi-lsp writes is kept in the order it
arrived, checked against ACP's published v1 JSON schema (``schema/v1/schema.json`` of the
official TypeScript SDK, installed by ``ts_client/install.sh``), and pi-lsp's requests to the
client are answered by the test's handlers. What pi-lsp writes on stderr is kept too.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jsonschema
import referencing
import referencing.jsonschema

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.e2e.acp.support import HOME, acp_command

SCHEMA = (
    Path(__file__).parent / "ts_client/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
)

Answer = Callable[[dict[str, Any]], Awaitable[Any]]
"""A handler for one method pi-lsp calls on the client: its params → the result (or raises
:class:`Refusal`)."""


class Refusal(Exception):
    """The client answers the request with this JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@functools.cache
def _schema() -> tuple[dict[str, Any], referencing.Registry]:
    if not SCHEMA.is_file():
        raise AssertionError(
            f"{SCHEMA} is missing: run `make install` (tests/e2e/acp/ts_client/install.sh)"
        )
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    resource = referencing.jsonschema.DRAFT202012.create_resource(schema)
    return schema, referencing.Registry().with_resource("acp:v1", resource)


def _definition(method: str, kind: str) -> str:
    """The schema's definition of ``method``'s ``Request``, ``Response`` or ``Notification``."""
    schema, _ = _schema()
    for name, definition in schema["$defs"].items():
        if definition.get("x-method") == method and name.endswith(kind):
            return name
    raise AssertionError(f"ACP's schema has no {kind} for {method}")


def check_against_schema(message: dict[str, Any], answered_method: str | None) -> None:
    """Fail unless ``message`` (a line pi-lsp wrote) is valid ACP v1.

    ``answered_method`` is the method of the request a response answers."""
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        kind = "Request" if "id" in message else "Notification"
        part, method = message.get("params"), message["method"]
    elif "error" in message:
        error = message["error"]
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        return
    else:
        kind, part, method = "Response", message.get("result"), answered_method
        assert method is not None, f"a response to no request: {message}"
    _, registry = _schema()
    reference = {"$ref": f"acp:v1#/$defs/{_definition(method, kind)}"}
    validator = jsonschema.Draft202012Validator(reference, registry=registry)
    errors = sorted(validator.iter_errors(part), key=lambda error: list(error.path))
    assert not errors, f"{method} {kind} is not valid ACP v1: {errors[0].message} in {message}"


class WireClient:
    """One ``pi-lsp acp`` process and every line it wrote, in order."""

    def __init__(self, process: asyncio.subprocess.Process, answers: dict[str, Answer]) -> None:
        self.process = process
        self.answers = answers
        self.lines: list[dict[str, Any]] = []
        """Every message pi-lsp wrote, in order (each one already checked against the schema)."""
        self.stderr = bytearray()
        self._sent_methods: dict[int, str] = {}
        self._next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and read lines until its response (answering pi-lsp's requests)."""
        self._next_id += 1
        request_id = self._next_id
        self._sent_methods[request_id] = method
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = await self._read()
            if message.get("id") == request_id and "method" not in message:
                return message

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def index(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        """The position of the first line ``predicate`` accepts."""
        return next(number for number, line in enumerate(self.lines) if predicate(line))

    def updates(self) -> list[dict[str, Any]]:
        updates = [line for line in self.lines if line.get("method") == "session/update"]
        return [line["params"]["update"] for line in updates]

    async def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout=120)
        assert line, f"pi-lsp acp closed stdout; stderr: {self.stderr.decode(errors='replace')}"
        message = json.loads(line)
        answered = self._sent_methods.get(message["id"]) if "method" not in message else None
        check_against_schema(message, answered)
        self.lines.append(message)
        if "method" in message and "id" in message:
            await self._answer(message)
        return message

    async def _answer(self, message: dict[str, Any]) -> None:
        answer = self.answers.get(message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if answer is None:
            reply["error"] = {"code": -32601, "message": f"{message['method']} not offered"}
        else:
            try:
                reply["result"] = await answer(message["params"])
            except Refusal as refusal:
                reply["error"] = {"code": refusal.code, "message": str(refusal)}
        self._write(reply)

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")


def disk_files() -> dict[str, Answer]:
    """``fs/*`` answered from and to the disk, as an editor with no unsaved buffers does."""

    async def read(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": Path(params["path"]).read_text(encoding="utf-8")}

    async def write(params: dict[str, Any]) -> dict[str, Any]:
        Path(params["path"]).write_text(params["content"], encoding="utf-8")
        return {}

    return {"fs/read_text_file": read, "fs/write_text_file": write}


def client_terminals() -> dict[str, Answer]:
    """``terminal/*`` answered by running each command to its end at ``terminal/create``."""
    ran: dict[str, tuple[int, str]] = {}

    async def create(params: dict[str, Any]) -> dict[str, Any]:
        process = await asyncio.create_subprocess_exec(
            params["command"],
            *params.get("args", []),
            cwd=params.get("cwd"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
        terminal_id = f"terminal-{len(ran) + 1}"
        ran[terminal_id] = (process.returncode or 0, output.decode(errors="replace"))
        return {"terminalId": terminal_id}

    async def wait_for_exit(params: dict[str, Any]) -> dict[str, Any]:
        return {"exitCode": ran[params["terminalId"]][0]}

    async def output(params: dict[str, Any]) -> dict[str, Any]:
        code, text = ran[params["terminalId"]]
        return {"output": text, "truncated": False, "exitStatus": {"exitCode": code}}

    async def release(params: dict[str, Any]) -> dict[str, Any]:
        return {}

    return {
        "terminal/create": create,
        "terminal/wait_for_exit": wait_for_exit,
        "terminal/output": output,
        "terminal/release": release,
    }


@contextlib.asynccontextmanager
async def wire_agent(
    scripted_llm: ScriptedLLM,
    workspace: Path,
    answers: dict[str, Answer] | None = None,
    client_capabilities: dict[str, Any] | None = None,
    **extra_options: Any,
):
    """A ``pi-lsp acp`` process on the scripted model, initialized, and its :class:`WireClient`."""
    options = {
        "model": "openai/scripted",
        "apiBase": scripted_llm.base_url,
        "retry": {"baseDelayMs": 20},
        "autoName": False,
        **extra_options,
    }
    process = await asyncio.create_subprocess_exec(
        *acp_command(options),
        env=isolated_environment(HOME),
        cwd=workspace,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=50 * 1024 * 1024,
    )
    client = WireClient(process, answers or {})
    assert process.stderr is not None
    stderr_reader = asyncio.ensure_future(_keep(process.stderr, client.stderr))
    try:
        answer = await client.request(
            "initialize",
            {"protocolVersion": 1, "clientCapabilities": client_capabilities or {}},
        )
        assert "result" in answer, answer
        yield client
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except TimeoutError:
            process.kill()
            await process.wait()
        await stderr_reader


async def _keep(stream: asyncio.StreamReader, into: bytearray) -> None:
    while chunk := await stream.read(65536):
        into.extend(chunk)
