"""End-to-end fixtures: the real ``pi-lsp`` server over stdio (pytest-lsp) and the scripted model.

Each test gets a fresh workspace, a scripted OpenAI-compatible server on 127.0.0.1 (reached by the
real litellm client inside the server process), and a client that records every ``pi/event``.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import LanguageClientProtocol, register_lsp_features

from pi_lsp.client import EventLog, PlainPiMessages, isolated_environment, pi_request
from pi_lsp.scripted_llm.server import ScriptedLLM
from tests.reliability.raw_lsp import RawLsp

SCRIPTED_MODEL = "openai/scripted"


HOME = Path(tempfile.mkdtemp(prefix="pi-lsp-e2e-home-"))
"""The server's home: keeps ~/.pi/agent, logs and caches of the machine out of the tests."""


def server_environment() -> dict[str, str]:
    return isolated_environment(HOME)


class PiTestProtocol(PlainPiMessages, LanguageClientProtocol):
    """pytest-lsp's client protocol, with ``pi/*`` results and notifications as plain JSON, as a
    real editor sees them (pi-lsp's own client helper does the same, ``pi_lsp.client``)."""


def make_client() -> LanguageClient:
    """pytest-lsp's test client, speaking pi-lsp's messages as plain JSON."""
    client = LanguageClient(protocol_cls=PiTestProtocol, converter_factory=default_converter)
    register_lsp_features(client)
    return client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "AGENTS.md").write_text("Always answer in English.\n")
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return root


SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "pi_lsp"],
    server_env=server_environment(),
    client_factory=make_client,
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
        # Naming asks the model once more after a first answer; tests that script exact replies
        # or count requests leave it off (the naming tests turn it on).
        "autoName": False,
    }
    if marker:
        options.update(marker.kwargs)
        options = {key: value for key, value in options.items() if value is not None}
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
    ``setup(client)`` runs before ``initialize`` (to register the client's own handlers).
    ``autoName`` is off unless ``options`` says otherwise, as in the ``client`` fixture."""
    options = {**options, "autoName": options.get("autoName", False)}
    other = make_client()
    if setup is not None:
        setup(other)
    await other.start_io(*SERVER.server_command, env=environment or SERVER.server_env)
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
    """Send a ``pi/*`` request; its result as plain JSON (``PiRequestError`` for an error)."""
    return await pi_request(client, method, params)


@pytest.fixture
async def raw_server(tmp_path: Path):
    """A server over stdio, initialized, that the test speaks to byte by byte (``RawLsp``): for
    what a client library would refuse to send."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    raw = await RawLsp.start([sys.executable, "-m", "pi_lsp"], isolated_environment(tmp_path))
    initialize = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
    await raw.request(0, "initialize", initialize, 60)
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield raw
    raw.process.kill()
    await raw.process.wait()
