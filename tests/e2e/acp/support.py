"""What the ``pi-lsp acp`` end-to-end tests share: a recording ACP client (the SDK's client side)
and a ``pi-lsp acp`` process started with the scripted model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.schema import AgentMessageChunk, ClientCapabilities

from pi_lsp.client import isolated_environment
from pi_lsp.scripted_llm.server import ScriptedLLM

HOME = Path(tempfile.mkdtemp(prefix="pi-lsp-acp-home-"))


def acp_command(options: dict[str, Any]) -> list[str]:
    """``pi-lsp acp --options OPTIONS`` as this checkout runs it."""
    return [sys.executable, "-m", "pi_lsp", "acp", "--options", json.dumps(options)]


class RecordingClient:
    """An ACP client that records every ``session/update`` and offers no fs or terminal."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    def on_connect(self, connection: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, *args: Any, **kwargs: Any):
        raise RequestError.method_not_found("session/request_permission")

    async def read_text_file(self, *args: Any, **kwargs: Any):
        raise RequestError.method_not_found("fs/read_text_file")

    async def write_text_file(self, *args: Any, **kwargs: Any):
        raise RequestError.method_not_found("fs/write_text_file")

    async def ext_method(self, method: str, params: dict) -> dict:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict) -> None:
        pass

    def reset(self) -> None:
        """Forget what was recorded (a warm process's client, between tests)."""
        self.updates.clear()

    def check_nothing_left(self) -> None:
        """Fail when something prepared for a test was not used by it."""

    def of_type(self, kind: type) -> list[Any]:
        return [update for _, update in self.updates if isinstance(update, kind)]

    def text(self, kind: type = AgentMessageChunk) -> str:
        return "".join(update.content.text for update in self.of_type(kind))


@contextlib.asynccontextmanager
async def acp_agent(
    scripted_llm: ScriptedLLM,
    workspace: Path,
    client: RecordingClient | None = None,
    capabilities: ClientCapabilities | None = None,
    **extra_options: Any,
):
    """A ``pi-lsp acp`` process, initialized, and the client recording its updates."""
    client = client or RecordingClient()
    options = {
        "model": "openai/scripted",
        "apiBase": scripted_llm.base_url,
        "retry": {"baseDelayMs": 20},
        "autoName": False,
        **extra_options,
    }
    async with spawn_agent_process(
        client,
        *acp_command({key: value for key, value in options.items() if value or value is False}),
        env=isolated_environment(HOME),
        cwd=workspace,
    ) as (connection, _process):
        answer = await connection.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities(),
        )
        yield connection, client, answer


async def start_streaming(connection, client: RecordingClient, session_id: str, text: str):
    """A prompt as a running request, once its answer has started streaming."""
    running = asyncio.ensure_future(
        connection.prompt(session_id=session_id, prompt=[text_block(text)])
    )
    while not client.of_type(AgentMessageChunk):
        await asyncio.sleep(0.02)
    return running


def saved_tool_results(workspace: Path) -> list[dict]:
    """The tool results saved in the workspace's one session file."""
    file = next((workspace / ".pi" / "sessions").glob("*.jsonl"))
    return [
        entry["message"]
        for entry in map(json.loads, file.read_text().splitlines())
        if entry.get("message", {}).get("role") == "toolResult"
    ]
