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
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcMethodNotFound,
    JsonRpcParseError,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from pi_lsp import __version__, protocol
from pi_lsp.errors import echoed
from pi_lsp.services import Services
from pi_lsp.transport.invalid_request import (
    NotAMessage,
    invalid_request,
    invalid_request_error,
    is_message,
    problem_with,
)

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
        """Keep a request whose typed params pygls cannot parse (a standard LSP method with wrong
        params) for an InvalidParams answer, and an object that is no JSON-RPC 2.0 message for an
        Invalid Request answer; pygls itself would log either and never answer."""
        if "jsonrpc" in data:
            problem = problem_with(data)
            if problem is not None:
                return NotAMessage(data, problem)
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if data.get("jsonrpc") != "2.0" or "id" not in data or "method" not in data:
                raise
            reason = f"{echoed(data['method'])}: invalid params: {echoed(error.message, 200)}"
            return RequestWithInvalidParams(data["id"], reason)

    def handle_message(self, message) -> None:
        # Answered here, once the whole body has decoded: structure_message also sees the objects
        # of a body that turns out not to be JSON, and objects nested inside a message.
        if not is_message(message) and not isinstance(message, RequestWithInvalidParams):
            invalid = invalid_request(message)
            if invalid is None:
                logger.warning("dropped a response without a jsonrpc member")
                return
            request_id, reason = invalid
            logger.warning("answered Invalid Request (id %r): %s", request_id, reason)
            self.send_error_answer(request_id, invalid_request_error(reason))
            return
        if isinstance(message, RequestWithInvalidParams):
            error = JsonRpcInvalidParams(message.reason).to_response_error()
            self._send_response(message.id, error=error)
            return
        super().handle_message(message)

    def send_error_answer(self, request_id: int | str | None, error: Any) -> None:
        """An error answer that keeps ``"id": null`` (pygls's would drop a null id, and JSON-RPC
        requires the member: null says the id of the message answered could not be read)."""
        answer = {"jsonrpc": "2.0", "id": request_id, "error": self._converter.unstructure(error)}
        self._send_data(answer)

    def _get_handler(self, feature_name: str):
        # pygls's "Method Not Found" quotes the method name, which a client may make megabytes long.
        try:
            return super()._get_handler(feature_name)
        except JsonRpcMethodNotFound:
            raise JsonRpcMethodNotFound.of(echoed(feature_name)) from None


@attrs.frozen
class RequestWithInvalidParams:
    """A request pygls could not structure, to be answered with InvalidParams."""

    id: int | str
    reason: str


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
        self.session_watch: asyncio.Task | None = None
        """The task telling the session index about files written by others (``initialized``)."""
        self.editor_watch: asyncio.Task | None = None
        """The task watching the editor process named in ``initialize`` (see ``client_gone``)."""
        self.log_handler: logging.Handler | None = None
        """The handler sending log records to this client (from ``initialized`` on)."""
        self.working_directory: str | None = None
        """The client's working directory when it is not this process's (the shared server):
        the workspace of a client that names none."""
        self.language_models: Any = None
        """The channel to the client's own models (``handlers/language_models.py``), when it
        advertised them."""
        self.connection_ended: Any = None
        """Set by the shared server (``transport/shared_daemon.py``): called, instead of ending the
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
            protocol = self.protocol
            assert isinstance(protocol, PiProtocol)
            protocol.send_error_answer(None, parse_error.to_response_error())


def build_server(protocol_cls: type[PiProtocol] = PiProtocol) -> PiLanguageServer:
    from pi_lsp.handlers import register_all

    server = PiLanguageServer(protocol_cls)
    register_all(server)
    return server
