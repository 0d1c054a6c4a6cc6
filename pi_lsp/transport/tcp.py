"""LSP over TCP without handing the agent to whoever connects: loopback only, and a secret token.

The agent behind pi-lsp runs commands and writes files as the user, so ``pi-lsp --tcp HOST:PORT``
binds loopback addresses only (any other host needs ``--allow-remote``) and every connection must
prove it may drive the agent: its first message must be ``initialize`` carrying, as
``initializationOptions.token``, the random token pi-lsp wrote at start to a file only the user can
read. A connection that does not is answered with an error and closed before pygls sees a byte of
it, so it can neither be served nor disturb the client being served. As over stdio, the server
serves one client and exits when that client disconnects.

pygls' own ``start_tcp`` cannot do this: every connection takes over the one protocol's writer and
the first connection to close shuts the server down.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
import signal
import socket
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import platformdirs
from pygls.exceptions import JsonRpcException

from pi_lsp.errors import AlreadyServingError, InvalidParamsError, UnauthorizedConnectionError
from pi_lsp.transport.framing import ResynchronisingReader, serve_messages

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)

TOKEN_OPTION = "token"
"""The ``initializationOptions`` key a TCP client puts the token under."""
AUTHENTICATION_TIMEOUT_SECONDS = 30.0
"""How long a new connection may take to send its ``initialize``."""
MAX_INITIALIZE_BYTES = 1 << 20
"""The largest first message read from a connection that has not proved anything yet."""
MAX_HEADER_LINES = 16


@attrs.frozen
class TcpAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> TcpAddress:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6; port 0 picks a free port)."""
    host, _, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or int(port) > 65535:
        raise InvalidParamsError(f"--tcp expects HOST:PORT such as 127.0.0.1:7777, got {text!r}")
    return TcpAddress(host, int(port))


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (``localhost`` is resolved)."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise InvalidParamsError(f"--tcp: cannot resolve the host {host!r}") from None
    addresses = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found}
    return bool(addresses) and all(address.is_loopback for address in addresses)


def require_loopback(address: TcpAddress, *, allow_remote: bool) -> str | None:
    """Refuse a host that is not loopback unless ``allow_remote``; then return a warning."""
    if is_loopback(address.host):
        return None
    if not allow_remote:
        raise InvalidParamsError(
            f"--tcp {address}: {address.host} is not a loopback address. pi-lsp serves TCP on "
            "127.0.0.1, ::1 or localhost only, because whoever reaches the port can drive an agent "
            "that runs commands as you. Add --allow-remote to serve on it anyway (clients still "
            "need the token)."
        )
    return (
        f"warning: --allow-remote: serving on {address}, which other machines may reach. Anyone "
        "who has the token can run commands as you; keep the token file private and prefer a "
        "loopback address with an SSH tunnel or a port published on the host's 127.0.0.1."
    )


# --------------------------------------------------------------------------- the token file


def new_token() -> str:
    return secrets.token_urlsafe(32)


def default_token_file(port: int) -> Path:
    """``tcp-<port>.token`` in the user runtime directory, else the user state directory."""
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # platformdirs warns when it falls back from XDG_RUNTIME_DIR
        try:
            directory = platformdirs.user_runtime_path("pi-lsp", appauthor=False)
        except OSError:
            directory = platformdirs.user_state_path("pi-lsp", appauthor=False)
    return directory / f"tcp-{port}.token"


def write_token_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path`` readable by the user alone (mode 0600), replacing any old file.

    The file is created exclusively under a random name and renamed into place, so a file or
    symlink planted at ``path`` is replaced, never written through.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(token + "\n")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def remove_token_file(path: Path, token: str) -> None:
    """Remove the token file if it still holds ``token`` (a newer server may have replaced it)."""
    with contextlib.suppress(OSError):
        if path.read_text(encoding="ascii").strip() == token:
            path.unlink()


# --------------------------------------------------------------------------- admitting connections


class Refused(Exception):
    """A connection that must be closed; ``answer`` is the error response to send first, if any."""

    def __init__(self, reason: str, answer: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.answer = answer


def _error_answer(request_id: Any, code: int, message: str) -> dict[str, Any]:
    # data.retry is LSP's InitializeError: the client should not retry with the same options.
    error = {"code": code, "message": message, "data": {"retry": False}}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """The body of one LSP message (``Content-Length`` framing), bounded in size."""
    content_length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            raise Refused("closed before sending initialize")
        if not line.strip():
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            content_length = int(value.strip())
    else:
        raise Refused("too many header lines")
    if content_length is None or content_length > MAX_INITIALIZE_BYTES:
        raise Refused("no usable Content-Length header")
    return await reader.readexactly(content_length)


class ConnectionGate:
    """Admits one client: the first whose first message is ``initialize`` with the token."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()
        self.serving = False

    def admit(self, body: bytes) -> dict[str, Any]:
        """The ``initialize`` message without its token, or ``Refused``."""
        try:
            message = json.loads(body)
        except ValueError:
            raise Refused(
                "the first message is not JSON", _error_answer(None, -32700, "Parse error")
            ) from None
        if not isinstance(message, dict):
            reason = "the first message is not a JSON-RPC message"
            raise Refused(reason, _error_answer(None, -32600, f"Invalid Request: {reason}"))
        params = message.get("params")
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        problem = self._problem(message.get("method"), options)
        if problem is not None:
            code, text = problem
            answer = (
                _error_answer(message["id"], code, f"pi-lsp refused the connection: {text}")
                if "id" in message
                else None
            )
            raise Refused(text, answer)
        assert isinstance(options, dict)
        del options[TOKEN_OPTION]  # nothing past this gate ever sees the token
        self.serving = True
        return message

    def _problem(self, method: Any, options: Any) -> tuple[int, str] | None:
        """Why a first message with ``method`` and ``initializationOptions`` is refused, if so."""
        unauthorized = UnauthorizedConnectionError.code
        if method != "initialize":
            return unauthorized, (
                "the first message on a TCP connection must be initialize with "
                f"initializationOptions.{TOKEN_OPTION}"
            )
        given = options.get(TOKEN_OPTION) if isinstance(options, dict) else None
        if not isinstance(given, str) or not given:
            return unauthorized, (
                f"initializationOptions.{TOKEN_OPTION} is missing: a TCP client must send the "
                "token from the file pi-lsp wrote at start (its path is printed on stderr; "
                "--token-file chooses it)"
            )
        if not hmac.compare_digest(given.encode(), self._token):
            return unauthorized, (
                f"initializationOptions.{TOKEN_OPTION} is wrong: send the token from the file "
                "pi-lsp wrote at start"
            )
        if self.serving:
            return AlreadyServingError.code, (
                "this pi-lsp server already serves a client; "
                "start another server for another editor"
            )
        return None


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _close(writer: asyncio.StreamWriter, answer: dict[str, Any] | None = None) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        if answer is not None:
            writer.write(_frame(answer))
            await writer.drain()
        writer.close()
        await writer.wait_closed()


# --------------------------------------------------------------------------- serving


async def serve(
    server: LanguageServer,
    address: TcpAddress,
    token: str,
    on_listening: Callable[[TcpAddress], None],
) -> None:
    """Listen on ``address`` and serve the first client that presents ``token``, until it leaves."""
    gate = ConnectionGate(token)
    client_gone = asyncio.Event()
    waiting: set[asyncio.StreamWriter] = set()

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        waiting.add(writer)
        try:
            body = await asyncio.wait_for(read_frame(reader), AUTHENTICATION_TIMEOUT_SECONDS)
            initialize = gate.admit(body)
        except Refused as refusal:
            logger.warning("refused a TCP connection from %s: %s", peer, refusal.reason)
            await _close(writer, refusal.answer)
            return
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError) as error:
            logger.warning("refused a TCP connection from %s: %s", peer, type(error).__name__)
            await _close(writer)
            return
        finally:
            waiting.discard(writer)
        logger.info("serving the TCP client at %s", peer)
        try:
            await _serve_client(server, initialize, reader, writer)
        finally:
            client_gone.set()

    listener = await asyncio.start_server(on_connection, address.host, address.port)
    with contextlib.suppress(NotImplementedError, AttributeError):  # no signal handlers on Windows
        # A launcher stops the server with SIGTERM: leave as when the client goes (token removed).
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, client_gone.set)
    try:
        # The numeric address: with port 0, each address of a name such as localhost gets a port
        # of its own.
        bound = listener.sockets[0].getsockname()
        on_listening(TcpAddress(str(bound[0]), int(bound[1])))
        await client_gone.wait()
    finally:
        listener.close()
        for writer in list(waiting):
            writer.close()
    logger.info("the TCP client disconnected; stopping")
    server.shutdown()


async def _serve_client(
    server: LanguageServer,
    initialize: dict[str, Any],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    protocol = server.protocol
    protocol.set_writer(writer)
    # The same path pygls' read loop takes for every message, for the one the gate already read.
    try:
        protocol.handle_message(
            json.loads(json.dumps(initialize), object_hook=protocol.structure_message)
        )
    except Exception as error:
        logger.exception("Unable to handle message")
        server.report_server_error(error, JsonRpcException)
    await serve_messages(server, ResynchronisingReader(reader))


def run(
    server: LanguageServer, address_text: str, *, allow_remote: bool, token_file: str | None
) -> None:
    """``pi-lsp --tcp``: check the host, create the token, listen, announce on stderr, serve."""
    address = parse_address(address_text)
    warning = require_loopback(address, allow_remote=allow_remote)
    if warning:
        print(f"pi-lsp: {warning}", file=sys.stderr, flush=True)
        logger.warning("%s", warning)
    token = new_token()
    written: list[Path] = []

    def on_listening(bound: TcpAddress) -> None:
        path = (
            Path(token_file).expanduser().absolute()
            if token_file
            else default_token_file(bound.port)
        )
        write_token_file(path, token)
        written.append(path)
        logger.info("listening on %s; token file %s", bound, path)
        print(f"pi-lsp: listening on {bound}", file=sys.stderr)
        print(f"pi-lsp: token file: {path}", file=sys.stderr, flush=True)

    try:
        asyncio.run(serve(server, address, token, on_listening))
    finally:
        for path in written:
            remove_token_file(path, token)
