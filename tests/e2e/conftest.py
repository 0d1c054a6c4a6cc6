"""End-to-end fixtures: the real ``pi-lsp`` server over stdio (pytest-lsp) and the scripted model.

Each test gets a fresh workspace, a scripted OpenAI-compatible server on 127.0.0.1 (reached by the
real litellm client inside the server process), and a client that records every ``pi/event``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, make_test_lsp_client

from pi_lsp.scripted_llm.server import ScriptedLLM

SCRIPTED_MODEL = "openai/scripted"


class EventLog:
    """The ``pi/event`` notifications a client received, in arrival order."""

    def __init__(self) -> None:
        self.notifications: list[dict] = []
        self._changed = asyncio.Event()

    def add(self, params) -> None:
        self.notifications.append(_plain(params))
        self._changed.set()

    def events(self, session_id: str | None = None) -> list[dict]:
        return [n["event"] for n in self.notifications if session_id in (None, n["sessionId"])]

    def types(self, session_id: str | None = None) -> list[str]:
        return [event["type"] for event in self.events(session_id)]

    async def wait_for(self, event_type: str, timeout: float = 15.0) -> dict:
        async def find() -> dict:
            while True:
                for event in self.events():
                    if event["type"] == event_type:
                        return event
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), timeout)


def _plain(value):
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def plain(value):
    """A result of ``send_request_async`` (namedtuples) as dicts and lists."""
    return _plain(value)


HOME = Path(tempfile.mkdtemp(prefix="pi-lsp-e2e-home-"))
"""The server's home: keeps ~/.pi/agent, logs and caches of the machine out of the tests."""


def server_environment() -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        HOME=str(HOME),
        XDG_STATE_HOME=str(HOME / "state"),
        XDG_CACHE_HOME=str(HOME / "cache"),
        PI_CODING_AGENT_DIR=str(HOME / "agent"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    environment.pop("PI_LSP_MODEL", None)
    environment.pop("PI_CODING_AGENT_SESSION_DIR", None)
    return environment


@attrs.define
class RawResponse:
    id: int | str
    result: Any
    jsonrpc: str


@attrs.define
class RawNotification:
    method: str
    params: Any
    jsonrpc: str


def keep_pi_messages_raw(client: LanguageClient) -> None:
    """Let ``pi/*`` results and events arrive as plain JSON, as a real editor sees them.

    pygls would turn them into namedtuples, which rename keys that are not identifiers (entry ids
    such as "4143ed1a" become "_0").
    """
    result_type, message_type = client.protocol.get_result_type, client.protocol.get_message_type
    client.protocol.get_result_type = lambda method: (
        RawResponse if method.startswith("pi/") else result_type(method)
    )
    client.protocol.get_message_type = lambda method: (
        RawNotification if method == "pi/event" else message_type(method)
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "AGENTS.md").write_text("Always answer in English.\n")
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return root


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "pi_lsp"], server_env=server_environment()
)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path, request):
    """A server initialized on ``workspace`` with the
    scripted model (options: ``@pytest.mark.options``)."""
    # Started here rather than as a fixture argument: pytest-lsp resolves arguments inside its own
    # running loop, where async fixtures cannot be set up.
    scripted_llm = ScriptedLLM()
    await scripted_llm.start()
    lsp_client.scripted_llm = scripted_llm
    marker = request.node.get_closest_marker("options")
    options = {
        "model": SCRIPTED_MODEL,
        "apiBase": scripted_llm.base_url,
        "retry": {"baseDelayMs": 20},
    }
    if marker:
        options.update(marker.kwargs)
        options = {key: value for key, value in options.items() if value is not None}
    keep_pi_messages_raw(lsp_client)
    log = EventLog()
    lsp_client.feature("pi/event")(lambda params: log.add(params))
    lsp_client.pi_events = log
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(apply_edit=True)
            ),
            root_uri=workspace.as_uri(),
            initialization_options=options,
        )
    )
    yield
    if not lsp_client.stopped:  # a test may have shut the server down itself (a restart)
        await lsp_client.shutdown_session()
    await scripted_llm.stop()


@pytest.fixture
def events(client: LanguageClient) -> EventLog:
    return client.pi_events


@pytest.fixture
def scripted_llm(client: LanguageClient) -> ScriptedLLM:
    return client.scripted_llm


@contextlib.asynccontextmanager
async def another_server(
    workspace: Path,
    options: dict,
    environment: dict | None = None,
    capabilities: types.ClientCapabilities | None = None,
    setup=None,
):
    """A second server process on ``workspace`` with its own client (pi/* results as plain JSON);
    ``setup(client)`` runs before ``initialize`` (to register the client's own handlers)."""
    other = make_test_lsp_client()
    if setup is not None:
        setup(other)
    await other.start_io(*SERVER.server_command, env=environment or SERVER.server_env)
    keep_pi_messages_raw(other)
    try:
        await other.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options=options,
            )
        )
        yield other
    finally:
        await other.shutdown_session()
        await other.stop()


async def request(client: LanguageClient, method: str, params: dict) -> dict:
    """Send a ``pi/*`` request and return its result as plain dicts."""
    return plain(await client.protocol.send_request_async(method, params))
