"""A language client of pi-lsp: what the demo, the end-to-end tests and the benchmarks use.

``PiClient`` is pygls's language client on a ``python -m pi_lsp`` it starts itself (the process
is ``client.process``, so its pid, exit code and stderr are at hand): ``initialize_workspace``,
``request`` for ``pi/*`` requests (results as plain JSON; a failure raises ``PiRequestError`` with
the JSON-RPC code and message, ``TimeoutError`` after the client's timeout), every ``pi/event``
recorded in ``client.events`` (an ``EventLog`` that can wait for an event) and ``close``
(shutdown and exit, or a kill for a server that does not go).

``PlainPiMessages`` is the protocol mix-in behind it: pygls would turn untyped JSON into
namedtuples, renaming keys that are not identifiers (entry ids such as ``4143ed1a``); with it,
``pi/*`` results and ``pi/event`` params stay the JSON the server sent. The end-to-end tests mix
it into pytest-lsp's protocol the same way.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

from pi_lsp import __version__, protocol

SERVER_COMMAND = (sys.executable, "-m", "pi_lsp")
STREAM_LIMIT = 64 * 1024 * 1024
"""Bytes one LSP frame may have (a big session's pi/tree or pi/messages)."""

logger = logging.getLogger(__name__)


class PiRequestError(JsonRpcException):
    """A ``pi/*`` request failed: the server's JSON-RPC error ``code`` and ``message``."""

    def __init__(self, method: str, error: JsonRpcException) -> None:
        super().__init__(error.message, error.code, error.data)
        self.method = method

    def __str__(self) -> str:
        return f"{self.method} failed: {self.message}"


def isolated_environment(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (the process environment by default) for a server that must not touch the user's
    own pi settings, logs and caches: all of them under ``home``; no model, provider key or
    session directory given by the environment (a provider's key would choose the model)."""
    environment = dict(os.environ if base is None else base)
    environment.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        PI_CODING_AGENT_DIR=str(home / "agent"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    for name in (
        "PI_LSP_MODEL",
        "PI_LSP_API_BASE",
        "PI_LSP_API_KEY",
        "PI_CODING_AGENT_SESSION_DIR",
    ):
        environment.pop(name, None)
    for name in [name for name in environment if name.endswith("_API_KEY")]:
        del environment[name]
    return environment


# --------------------------------------------------------------------------- plain JSON messages


@attrs.define
class RawResponse:
    """A ``pi/*`` response whose result stays raw JSON."""

    id: int | str
    result: Any
    jsonrpc: str


@attrs.define
class RawNotification:
    """A ``pi/*`` notification whose params stay raw JSON."""

    method: str
    params: Any
    jsonrpc: str


class PlainPiMessages:
    """A protocol mix-in: ``pi/*`` results and notifications as plain JSON."""

    def get_result_type(self, method: str) -> type | None:
        if method.startswith("pi/"):
            return RawResponse
        return super().get_result_type(method)  # type: ignore[misc]

    def get_message_type(self, method: str) -> type | None:
        if method in (protocol.EVENT, protocol.RESOURCES_CHANGED):
            return RawNotification
        return super().get_message_type(method)  # type: ignore[misc]


# pygls caches the base methods with functools.lru_cache, which mypy sees as another signature.
class PiClientProtocol(PlainPiMessages, LanguageServerProtocol):  # type: ignore[misc]
    """pygls's client protocol, with pi-lsp's messages kept as plain JSON."""


# --------------------------------------------------------------------------- recorded events


class EventLog:
    """The ``pi/event`` notifications a client received, in arrival order."""

    def __init__(self) -> None:
        self.notifications: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []

    def add(self, params: Any) -> None:
        notification = dict(params) if isinstance(params, Mapping) else params
        self.notifications.append(notification)
        self._changed.set()
        for listener in self._listeners:
            listener(notification)

    def listen(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call ``listener`` with each notification as it arrives."""
        self._listeners.append(listener)

    def events(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [n["event"] for n in self.notifications if session_id in (None, n["sessionId"])]

    def types(self, session_id: str | None = None) -> list[str]:
        return [event["type"] for event in self.events(session_id)]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events() if event["type"] == event_type]

    async def wait_for(
        self, event_type: str, timeout: float = 15.0, *, count: int = 1
    ) -> dict[str, Any]:
        """The ``count``-th event of ``event_type`` (the first by default), waiting for it if it
        has not arrived yet."""

        async def find() -> dict[str, Any]:
            while True:
                found = self.of_type(event_type)
                if len(found) >= count:
                    return found[count - 1]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), timeout)


async def pi_request(
    client: LanguageClient, method: str, params: Any = None, timeout: float | None = None
) -> Any:
    """Send a ``pi/*`` request on any pygls client whose protocol keeps pi messages plain; its
    result, ``PiRequestError`` for an error answer, ``TimeoutError`` after ``timeout`` seconds."""
    try:
        future = client.protocol.send_request_async(method, params or {})
        return await asyncio.wait_for(future, timeout)
    except JsonRpcException as error:
        raise PiRequestError(method, error) from None
    except TimeoutError:
        raise TimeoutError(f"{method}: no answer within {timeout:.0f} s") from None


# --------------------------------------------------------------------------- the client


class PiClient(LanguageClient):
    """pygls's language client on a pi-lsp server process it starts (see the module docstring)."""

    def __init__(self, name: str = "pi-lsp-client", *, timeout: float | None = 60.0) -> None:
        super().__init__(name, __version__, protocol_cls=PiClientProtocol)
        self.timeout = timeout
        """Seconds a request may take (None: no limit)."""
        self.process: asyncio.subprocess.Process | None = None
        self.events = EventLog()
        self._stopping = threading.Event()
        self._connection: asyncio.Task | None = None
        self.log_messages: list[str] = []
        """The texts of the server's ``window/logMessage`` notifications, in arrival order."""
        self.feature(protocol.EVENT)(lambda params: self.events.add(params))
        self.feature(types.WINDOW_LOG_MESSAGE)(
            lambda params: self.log_messages.append(params.message)
        )

    @property
    def stopped(self) -> bool:
        return self._stopping.is_set() or (
            self.process is not None and self.process.returncode is not None
        )

    async def start_server(
        self,
        command: Sequence[str] = SERVER_COMMAND,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        stderr: int = asyncio.subprocess.PIPE,
    ) -> None:
        """Start the server process and talk LSP with it over its stdin and stdout."""
        self.process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=STREAM_LIMIT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.protocol.set_writer(self.process.stdin)
        self._connection = asyncio.get_running_loop().create_task(
            run_async(
                stop_event=self._stopping,
                reader=self.process.stdout,
                protocol=self.protocol,
                logger=logger,
                error_handler=self.report_server_error,
            )
        )

    async def initialize_workspace(
        self,
        workspace: Path,
        options: Any = None,
        capabilities: types.ClientCapabilities | None = None,
    ) -> types.InitializeResult:
        """``initialize`` on ``workspace`` with ``options``, then ``initialized``."""
        params = types.InitializeParams(
            capabilities=capabilities or types.ClientCapabilities(),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            initialization_options=options,
        )
        result = await asyncio.wait_for(self.initialize_async(params), self.timeout)
        self.initialized(types.InitializedParams())
        return result

    async def request(self, method: str, params: Any = None) -> Any:
        """A ``pi/*`` request's result as plain JSON; ``PiRequestError`` when it fails."""
        return await pi_request(self, method, params, self.timeout)

    async def close(self, timeout: float = 5.0) -> None:
        """Shut the server down politely; kill it if it does not go within ``timeout`` seconds."""
        process = self.process
        if process is None:
            return
        try:
            if process.returncode is None:
                await asyncio.wait_for(self.shutdown_async(None), timeout)
                self.exit(None)
                await asyncio.wait_for(process.wait(), timeout)
        except Exception:  # noqa: BLE001 - a server that ignores shutdown must not outlive us
            if process.returncode is None:
                process.kill()
                await process.wait()
        self._stopping.set()
        if self._connection is not None:
            await asyncio.gather(self._connection, return_exceptions=True)

    async def exit_reason(self) -> str | None:
        """Why the server process ended on its own (its exit code and last line on stderr), or
        None while it runs or after it exited cleanly."""
        process = self.process
        if process is None or process.returncode in (None, 0):
            return None
        stderr = await process.stderr.read() if process.stderr is not None else b""
        tail = stderr.decode(errors="replace").strip().splitlines()
        return f"the server exited with code {process.returncode}" + (
            f": {tail[-1]}" if tail else ""
        )

    def report_server_error(self, error: Exception, source: Any) -> None:
        logger.error("pi-lsp client: %s", error)
