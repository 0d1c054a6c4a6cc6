"""An HTTP/1.1 POST whose answer is read as it streams: all the direct path needs of HTTP.

Built on h11 (the protocol: framing, chunked bodies, keep-alive rules) and asyncio's streams (the
sockets), because aiohttp, which the direct path used before, costs about 0.4 s of CPU to import
(its connector builds two TLS contexts at import) and that import lay on the path from a cold
start to the first model request; h11 costs a few milliseconds. A TLS context is made on the first
``https`` request only.

Proxies are taken from the environment as curl, requests and httpx take them (``proxies.py``:
``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, either case): an ``https`` URL goes
through an HTTP ``CONNECT`` tunnel to the proxy, TLS inside the tunnel; an ``http`` URL is sent
to the proxy with its absolute URL as the request target. ``user:password@`` in the proxy's URL
becomes ``Proxy-Authorization: Basic``.

Connections are kept alive and reused across turns, one pool per event loop, closed when the loop
shuts down. A kept-alive connection the server has meanwhile closed fails before any byte of an
answer; the request is then sent once more on a new connection. Failures: ``TimeoutError`` (a
connect or a read took longer than ``timeout``), ``AnswerCutOff`` (the answer began and broke
off), ``OSError`` or ``h11.ProtocolError`` (no answer at all).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from urllib.parse import urlsplit

import attrs
import h11

from pi_lsp.llm.provider_errors import ProviderError, connection_error, timeout_error
from pi_lsp.llm.proxies import Proxy, proxy_for

READ_SIZE = 65536
USER_AGENT = "pi-lsp"
FINISH_SECONDS = 5.0
"""How long the rest of an answer whose reader saw its end marker may take to arrive, read in the
background so the connection can be kept alive."""


class AnswerCutOff(Exception):
    """The server began its answer and the connection broke before its end."""


@attrs.frozen
class Target:
    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise OSError(f"not an http(s) URL: {url}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(parts.scheme, parts.hostname, port, path)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


@attrs.define
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    http: h11.Connection = attrs.field(factory=lambda: h11.Connection(h11.CLIENT))
    reused: bool = False
    forwarding_proxy: Proxy | None = None
    """A proxy the requests are sent to as they are (``http`` URLs): absolute targets."""

    async def next_event(self, timeout: float | None) -> object:
        while True:
            event = self.http.next_event()
            if event is not h11.NEED_DATA:
                return event
            await self.receive(timeout)

    async def receive(self, timeout: float | None) -> None:
        """Hand h11 what has arrived (``b""`` at the end of the stream)."""
        # asyncio.timeout re-arms one timer; wait_for would start a task for every read.
        async with asyncio.timeout(timeout):
            data = await self.reader.read(READ_SIZE)
        self.http.receive_data(data)

    def ready_for_next(self) -> bool:
        """After a whole answer: whether the connection may carry another request (then made
        ready for it)."""
        if self.http.our_state is h11.DONE and self.http.their_state is h11.DONE:
            self.http.start_next_cycle()
            self.reused = True
            return True
        return False

    def close(self) -> None:
        self.writer.close()


@attrs.define
class Response:
    """The status, and the body as it arrives: ``lines`` or ``text``."""

    status: int
    _connection: _Connection
    _timeout: float | None
    finished: bool = False
    end_seen: bool = False
    """The reader met the body's own end marker (a server-sent ``[DONE]``) and stopped there."""

    def saw_end(self) -> None:
        """Tell the response its reader stopped at the body's end marker: the HTTP message's
        end, which is all that should follow, is then read in the background and the connection
        kept alive for the next request (else it is closed, as after an aborted read)."""
        self.end_seen = True

    async def chunks(self) -> AsyncIterator[bytes]:
        # The events already received are taken without a coroutine call each: a stream of
        # small server-sent events is one h11 event per model delta.
        connection = self._connection
        try:
            while True:
                event = connection.http.next_event()
                if event is h11.NEED_DATA:
                    await connection.receive(self._timeout)
                elif type(event) is h11.Data:
                    yield bytes(event.data)
                elif type(event) is h11.EndOfMessage:
                    self.finished = True
                    return
        except TimeoutError:
            raise
        except (OSError, h11.ProtocolError) as error:
            raise AnswerCutOff(str(error)) from error

    async def lines(self) -> AsyncIterator[bytes]:
        """The body's lines, without their ``\\n``."""
        pending = b""
        async for chunk in self.chunks():
            if b"\n" not in chunk:
                pending += chunk
                continue
            lines = chunk.split(b"\n")
            if pending:
                lines[0] = pending + lines[0]
            pending = lines.pop()
            for line in lines:
                yield line
        if pending:
            yield pending

    async def text(self) -> str:
        return b"".join([chunk async for chunk in self.chunks()]).decode("utf-8", "replace")


@contextlib.asynccontextmanager
async def post(
    url: str, body: bytes, headers: Mapping[str, str], timeout: float | None
) -> AsyncGenerator[Response, None]:
    """POST ``body`` to ``url``; the response once its status and headers have arrived."""
    target = Target.parse(url)
    pool = await _pool()
    connection = pool.take(target) or await _open(target, timeout)
    try:
        status = await _send(connection, target, body, headers, timeout)
    except (OSError, h11.ProtocolError) as error:
        connection.close()
        if not connection.reused or isinstance(error, TimeoutError):
            raise
        # Kept alive, but closed by the server meanwhile: once more, on a new connection.
        connection = await _open(target, timeout)
        try:
            status = await _send(connection, target, body, headers, timeout)
        except BaseException:
            connection.close()
            raise
    except BaseException:
        connection.close()
        raise
    response = Response(status, connection, timeout)
    try:
        yield response
    finally:
        if response.finished and connection.ready_for_next():
            pool.give_back(target, connection)
        elif response.end_seen and not response.finished:
            finishing = asyncio.ensure_future(_finish(pool, target, connection, response))
            _finishing.add(finishing)
            finishing.add_done_callback(_finishing.discard)
        else:
            connection.close()


_finishing: set[asyncio.Future[None]] = set()
"""The answers being read to their end in the background (held so they are not collected)."""


async def _finish(pool: _Pool, target: Target, connection: _Connection, response: Response) -> None:
    """Read what remains of an answer whose end marker was seen; keep the connection if it ends
    within ``FINISH_SECONDS`` and may carry another request."""
    try:
        async with asyncio.timeout(FINISH_SECONDS):
            async for _ in response.chunks():
                pass
    except (TimeoutError, OSError, h11.ProtocolError, AnswerCutOff):
        connection.close()
        return
    except BaseException:  # cancelled: the loop is shutting down
        connection.close()
        raise
    if response.finished and connection.ready_for_next():
        pool.give_back(target, connection)
    else:
        connection.close()


async def _send(
    connection: _Connection,
    target: Target,
    body: bytes,
    headers: Mapping[str, str],
    timeout: float | None,
) -> int:
    """Send the request; the answer's status once its head has arrived."""
    proxy = connection.forwarding_proxy
    request_target = target.path
    proxy_headers: list[tuple[str, str]] = []
    if proxy is not None:
        request_target = f"{target.scheme}://{target.host_header}{target.path}"
        proxy_headers = _proxy_authorization(proxy)
    request = h11.Request(
        method="POST",
        target=request_target,
        headers=[
            ("Host", target.host_header),
            ("User-Agent", USER_AGENT),
            ("Content-Length", str(len(body))),
            *proxy_headers,
            *headers.items(),
        ],
    )
    http = connection.http
    head, data, end = (
        http.send(request),
        http.send(h11.Data(data=body)),
        http.send(h11.EndOfMessage()),
    )
    connection.writer.write(b"".join(part or b"" for part in (head, data, end)))
    await asyncio.wait_for(connection.writer.drain(), timeout)
    try:
        while True:
            event = await connection.next_event(timeout)
            if isinstance(event, h11.Response):
                return event.status_code
            if isinstance(event, h11.ConnectionClosed):
                raise ConnectionResetError("the server closed the connection without an answer")
    except h11.RemoteProtocolError as error:
        raise ConnectionResetError(f"no usable answer: {error}") from error


async def _open(target: Target, timeout: float | None) -> _Connection:
    proxy = proxy_for(target.scheme, target.host)
    if proxy is not None:
        return await _open_through(proxy, target, timeout)
    context = _tls_context() if target.scheme == "https" else None
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(
            target.host,
            target.port,
            ssl=context,
            server_hostname=target.host if context else None,
            limit=READ_SIZE * 4,
        ),
        timeout,
    )
    return _Connection(reader, writer)


class ProxyRefused(OSError):
    """The proxy answered the ``CONNECT`` with something else than 2xx."""


async def _open_through(proxy: Proxy, target: Target, timeout: float | None) -> _Connection:
    """A connection to ``target`` through ``proxy``: a tunnel for https, else the proxy itself."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(proxy.host, proxy.port, limit=READ_SIZE * 4), timeout
    )
    if target.scheme != "https":
        return _Connection(reader, writer, forwarding_proxy=proxy)
    try:
        host = f"[{target.host}]" if ":" in target.host else target.host
        authority = f"{host}:{target.port}"
        head = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
        head += [f"{name}: {value}" for name, value in _proxy_authorization(proxy)]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            async with asyncio.timeout(timeout):
                answer = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            raise ConnectionResetError("the proxy closed the connection") from error
        status_line = answer.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[1].startswith("2"):
            raise ProxyRefused(f"the proxy {proxy.host}:{proxy.port} answered {status_line!r}")
        async with asyncio.timeout(timeout):
            await writer.start_tls(_tls_context(), server_hostname=target.host)
    except BaseException:
        writer.close()
        raise
    return _Connection(reader, writer)


def _proxy_authorization(proxy: Proxy) -> list[tuple[str, str]]:
    if proxy.credentials is None:
        return []
    token = base64.b64encode(proxy.credentials.encode()).decode()
    return [("Proxy-Authorization", f"Basic {token}")]


_tls: list[ssl.SSLContext] = []


def _tls_context() -> ssl.SSLContext:
    if not _tls:
        context = ssl.create_default_context()
        context.set_alpn_protocols(["http/1.1"])
        _tls.append(context)
    return _tls[0]


class _Pool:
    """Idle kept-alive connections by target, for one event loop."""

    def __init__(self) -> None:
        self.idle: dict[Target, list[_Connection]] = {}

    def take(self, target: Target) -> _Connection | None:
        idle = self.idle.get(target)
        while idle:
            connection = idle.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection
            connection.close()
        return None

    def give_back(self, target: Target, connection: _Connection) -> None:
        self.idle.setdefault(target, []).append(connection)

    def close(self) -> None:
        for connections in self.idle.values():
            for connection in connections:
                connection.close()
        self.idle.clear()


_pools: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[_Pool, AsyncGenerator[None, None]]
] = weakref.WeakKeyDictionary()


async def _pool() -> _Pool:
    """This event loop's pool, open until the loop shuts down."""
    loop = asyncio.get_running_loop()
    held = _pools.get(loop)
    if held is not None:
        return held[0]
    pool = _Pool()
    keeper = _close_at_shutdown(pool)
    await anext(keeper)
    _pools[loop] = (pool, keeper)
    return pool


async def _close_at_shutdown(pool: _Pool) -> AsyncGenerator[None, None]:
    """Suspended for the loop's lifetime: ``asyncio.run`` closes every open async generator
    (``shutdown_asyncgens``) before it closes the loop, and with this one the pool."""
    try:
        yield
    finally:
        pool.close()


@contextlib.contextmanager
def failures_as_provider_errors() -> Iterator[None]:
    """A stream's failure to connect, to answer or to finish as the ``ProviderError`` it is for
    the retry rules (a provider's own ``ProviderError`` passes as it is)."""
    try:
        yield
    except ProviderError:
        raise
    except TimeoutError as error:
        raise timeout_error() from error
    except AnswerCutOff as error:
        raise connection_error(answered=True) from error
    except (OSError, h11.ProtocolError) as error:
        raise connection_error(answered=False) from error
