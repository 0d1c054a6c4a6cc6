"""``llm/http_stream``: the direct path's HTTP client against a raw asyncio server — bodies framed
either way, lines as they arrive, connections kept alive and reused, a connection the server
closed meanwhile replaced, and an answer cut off told from no answer at all."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from pi_lsp.llm import http_stream

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


class RawServer:
    """Serves each connection with ``handler``; counts connections and keeps the requests."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []

    async def __aenter__(self) -> str:
        async def on_connection(reader, writer):
            self.connections += 1
            try:
                await self.handler(self, reader, writer)
            finally:
                writer.close()

        self._server = await asyncio.start_server(on_connection, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1/chat/completions"

    async def __aexit__(self, *exc_info) -> None:
        self._server.close()


async def each_request(server, reader):
    """Yields once per request a client sends on a kept-alive connection, until it closes it."""
    while True:
        try:
            server.requests.append(await read_request(reader))
        except asyncio.IncompleteReadError:
            return
        yield


async def keep_alive_chunked(server, reader, writer):
    async for _ in each_request(server, reader):
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"8\r\ndata: 1\n\r\n5\r\n\ndata\r\n5\r\n: 2\n\n\r\n0\r\n\r\n"
        )
        await writer.drain()


async def answer_once_then_close(server, reader, writer):
    server.requests.append(await read_request(reader))
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes")
    await writer.drain()
    await asyncio.sleep(0.05)  # the connection goes back to the pool before it is closed here


async def cut_off(server, reader, writer):
    server.requests.append(await read_request(reader))
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: half")
    await writer.drain()


async def no_answer(server, reader, writer):
    server.requests.append(await read_request(reader))


async def lines_of(url: str, timeout: float | None = 5) -> list[bytes]:
    async with http_stream.post(url, b'{"a":1}', {"X-Team": "pi"}, timeout) as response:
        assert response.status == 200
        return [line async for line in response.lines()]


async def test_lines_arrive_whole_across_chunks_and_the_connection_is_reused():
    server = RawServer(keep_alive_chunked)
    async with server as url:
        first = await lines_of(url)
        second = await lines_of(url)
    assert first == second == [b"data: 1", b"", b"data: 2", b""]
    assert server.connections == 1
    request = server.requests[0]
    assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"x-team: pi" in request.lower() and request.endswith(b'\r\n\r\n{"a":1}')


async def done_then_end_later(server, reader, writer):
    """A server-sent stream whose ``[DONE]`` arrives before the end of the HTTP message."""
    async for _ in each_request(server, reader):
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        writer.write(b"e\r\ndata: [DONE]\n\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"0\r\n\r\n")
        await writer.drain()


async def read_to_done(url: str, *, say_so: bool) -> None:
    async with http_stream.post(url, b"{}", {}, 5) as response:
        async for line in response.lines():
            if line == b"data: [DONE]":
                if say_so:
                    response.saw_end()
                break


async def test_a_reader_stopping_at_its_end_marker_keeps_the_connection_alive():
    server = RawServer(done_then_end_later)
    async with server as url:
        for _ in range(3):
            await read_to_done(url, say_so=True)
            await asyncio.sleep(0.1)  # the rest of the answer is read in the background
    assert server.connections == 1 and len(server.requests) == 3


async def test_a_reader_stopping_anywhere_else_closes_the_connection():
    server = RawServer(done_then_end_later)
    async with server as url:
        for _ in range(2):
            await read_to_done(url, say_so=False)
    assert server.connections == 2


async def test_a_kept_alive_connection_closed_meanwhile_is_replaced():
    server = RawServer(answer_once_then_close)
    async with server as url:
        assert await lines_of(url) == [b"yes"]
        await asyncio.sleep(0.2)  # the server has closed the idle connection by now
        assert await lines_of(url) == [b"yes"]
    assert server.connections == 2 and len(server.requests) == 2


async def test_an_answer_cut_off_is_told_from_no_answer():
    async with RawServer(cut_off) as url:
        with pytest.raises(http_stream.AnswerCutOff):
            await lines_of(url)
    async with RawServer(no_answer) as url:
        with pytest.raises(OSError) as raised:
            await lines_of(url)
        assert not isinstance(raised.value, TimeoutError)


async def test_a_silent_server_times_out():
    async def silent(server, reader, writer):
        await read_request(reader)
        await asyncio.sleep(5)

    async with RawServer(silent) as url:
        with pytest.raises(TimeoutError):
            await lines_of(url, timeout=0.2)


async def test_an_error_status_is_read_as_text():
    async def refuse(server, reader, writer):
        await read_request(reader)
        body = '{"error": "nope ✗"}'.encode()
        writer.write(b"HTTP/1.1 429 Too Many\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()

    async with RawServer(refuse) as url, http_stream.post(url, b"{}", {}, 5) as response:
        assert response.status == 429
        assert await response.text() == '{"error": "nope ✗"}'


def test_targets_are_parsed_with_their_host_header():
    target = http_stream.Target.parse("https://example.com/v1/chat/completions?x=1")
    assert (target.port, target.path, target.host_header) == (
        443,
        "/v1/chat/completions?x=1",
        "example.com",
    )
    assert http_stream.Target.parse("http://[::1]:8080").host_header == "[::1]:8080"
    with pytest.raises(OSError):
        http_stream.Target.parse("ftp://example.com/")
