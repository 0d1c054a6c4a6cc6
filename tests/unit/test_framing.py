"""Header lines after a frame of the wrong length (``pi_lsp.transport.framing``)."""

from __future__ import annotations

import asyncio

from pi_lsp.transport.framing import ResynchronisingReader, resynchronised


def test_leftover_bytes_before_a_header_are_dropped_and_other_lines_kept():
    assert resynchronised(b'"}}Content-Length: 12\r\n') == b"Content-Length: 12\r\n"
    assert resynchronised(b"Content-Length: 12\r\n") == b"Content-Length: 12\r\n"
    assert resynchronised(b"\r\n") == b"\r\n"
    assert resynchronised(b'{"a": 1}') == b'{"a": 1}'


async def test_the_tcp_reader_resynchronises_and_skips_a_line_past_its_limit():
    stream = asyncio.StreamReader(limit=64)
    stream.feed_data(b"x" * 100 + b"\r\n" + b"leftover}Content-Length: 2\r\n\r\n{}")
    stream.feed_eof()
    reader = ResynchronisingReader(stream)

    assert await reader.readline() == b"\n"  # the overlong line, dropped
    assert await reader.readline() == b"Content-Length: 2\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(2) == b"{}"


async def test_frames_behind_overlong_leftover_bytes_are_kept():
    """Leftover bytes past the limit with no line end, then whole frames, all in the buffer:
    the frames are read (StreamReader.readline dropped the whole buffer with the leftover)."""
    stream = asyncio.StreamReader(limit=64)
    leftover = b"z" * 300
    stream.feed_data(leftover + b"Content-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\n[1 ]")
    stream.feed_eof()
    reader = ResynchronisingReader(stream)

    assert await reader.readline() == b"Content-Length: 2\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(2) == b"{}"
    assert await reader.readline() == b"Content-Length: 4\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(4) == b"[1 ]"
    assert await reader.readline() == b""


async def test_a_header_cut_by_the_limit_is_found_whole():
    stream = asyncio.StreamReader(limit=64)
    stream.feed_data(b"y" * 60 + b"Content-Length: 2\r\n\r\n{}")  # the header crosses the limit
    stream.feed_eof()
    reader = ResynchronisingReader(stream)

    assert await reader.readline() == b"Content-Length: 2\r\n"
