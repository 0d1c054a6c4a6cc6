"""Builds the pi-lsp language server: the pygls server, its protocol class and its handlers.

Nothing here holds business logic; ``build_server`` wires the pieces, and the services the handlers
call are created when the client says ``initialize`` (see ``handlers/lifecycle.py``), so a fresh
server can be built for every test.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import attrs
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcParseError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from pi_lsp import __version__, protocol
from pi_lsp.services import Services

logger = logging.getLogger(__name__)


@attrs.define
class RawRequest:
    """A ``pi/*`` request whose params stay raw JSON, so the handler can validate them itself.

    pygls would otherwise hand custom params over as namedtuples, and it never answers a request
    whose typed params fail to parse; validating in the handler gives the client InvalidParams
    with the bad field named. No field has a default: the converter drops fields equal to their
    default when it writes.
    """

    id: int | str
    method: str
    params: Any
    jsonrpc: str


@attrs.define
class RawNotification:
    """A ``pi/*`` notification whose params stay raw JSON (provider names are not identifiers,
    which pygls's namedtuples would rename)."""

    method: str
    params: Any
    jsonrpc: str


class PiProtocol(LanguageServerProtocol):
    """The LSP protocol plus pi-lsp's custom requests and notifications."""

    # pygls wraps the base method in functools.lru_cache; a plain method overrides it fine.
    def get_message_type(self, method: str) -> type | None:  # type: ignore[override]
        if method in protocol.PARAMS_BY_METHOD:
            return RawRequest
        if method in protocol.NOTIFICATION_PARAMS:
            return RawNotification
        return super().get_message_type(method)

    def structure_message(self, data: dict[str, Any]):
        """Answer a request whose typed params pygls cannot parse (a standard LSP method with
        wrong params) with InvalidParams; pygls itself would log it and never answer."""
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if data.get("jsonrpc") != "2.0" or "id" not in data or "method" not in data:
                raise
            message = f"{data['method']}: invalid params: {_shortened(error.message)}"
            self._send_response(data["id"], error=JsonRpcInvalidParams(message).to_response_error())
            return _ANSWERED


_ANSWERED = RawNotification(method="", params=None, jsonrpc="answered")
"""What a request already answered becomes: handle_message drops it (not JSON-RPC 2.0)."""


def _shortened(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class PiLanguageServer(LanguageServer):
    """The server; ``services`` exists from ``initialize`` on."""

    def __init__(self, protocol_cls: type[PiProtocol] = PiProtocol) -> None:
        super().__init__("pi-lsp", __version__, protocol_cls=protocol_cls)
        self.services: Services | None = None
        self.resource_watch: asyncio.Task | None = None
        """The task reloading resources as their files change (started at ``initialized``)."""
        self.configuration_pull: asyncio.Task | None = None
        """The latest ``workspace/configuration`` request (kept so the task is not collected)."""
        self.event_loop: asyncio.AbstractEventLoop | None = None
        """The loop serving the client (known from ``initialize`` on)."""
        self.editor_watch: asyncio.Task | None = None
        """The task watching the editor process named in ``initialize`` (see ``client_gone``)."""
        self.log_handler: logging.Handler | None = None
        """The handler sending log records to this client (from ``initialized`` on)."""
        self.working_directory: str | None = None
        """The client's working directory when it is not this process's (the shared server):
        the workspace of a client that names none."""
        self.connection_ended: Any = None
        """Set by the shared server (``shared/daemon.py``): called, instead of ending the
        process, once this client is gone and its work is saved."""

    def editor_bridge(self):
        from pi_lsp.handlers.editor import LspEditorBridge

        return LspEditorBridge(self)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop a window/showMessage for every internal error; a log line is enough,
        # requests already carry their errors in their responses.
        logger.error("server error (%s): %s", getattr(source, "__name__", source), error)
        if isinstance(error, (ValueError, RecursionError)) and source is JsonRpcException:
            # A body that is not JSON, or nested too deep to decode: JSON-RPC's Parse error,
            # with a null id since the request's own id could not be read.
            reason = "nested too deep" if isinstance(error, RecursionError) else str(error)
            parse_error = JsonRpcParseError(f"the message is not valid JSON: {reason}")
            self.protocol._send_response(None, error=parse_error.to_response_error())  # type: ignore[arg-type]


def build_server(protocol_cls: type[PiProtocol] = PiProtocol) -> PiLanguageServer:
    from pi_lsp.handlers import register_all

    server = PiLanguageServer(protocol_cls)
    register_all(server)
    return server
