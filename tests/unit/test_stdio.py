"""Reading stdin on the event loop (``pi_lsp.transport.stdio``)."""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path

import pytest

from pi_lsp.transport.stdio import EndWatchingReader, reads_on_the_loop


def test_pipes_and_sockets_are_read_on_the_loop_files_and_memory_are_not(tmp_path: Path):
    read_end, write_end = os.pipe()
    file = tmp_path / "input"
    file.write_bytes(b"")
    with os.fdopen(read_end, "rb") as pipe, os.fdopen(write_end, "wb"), file.open("rb") as opened:
        assert reads_on_the_loop(pipe)
        assert not reads_on_the_loop(opened)
    assert not reads_on_the_loop(io.BytesIO(b""))


def test_windows_keeps_pygls_reader_thread(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "platform", "win32")
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe, os.fdopen(write_end, "wb"):
        assert not reads_on_the_loop(pipe)


def reader_of(data: bytes) -> tuple[EndWatchingReader, list[None]]:
    """A reader of ``data`` and then the end of the input, and the list its ends are noted in."""
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    ends: list[None] = []
    return EndWatchingReader(stream, lambda: ends.append(None)), ends


async def test_the_end_of_the_input_calls_on_end_once_and_reading_then_waits():
    reader, ends = reader_of(b"leftover}Content-Length: 2\r\n\r\n{}")

    assert await reader.readline() == b"Content-Length: 2\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(2) == b"{}"
    assert ends == []
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.readline(), 0.1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.readline(), 0.1)
    assert ends == [None]


async def test_a_body_cut_short_by_the_end_counts_as_the_end():
    reader, ends = reader_of(b"{")

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.readexactly(10), 0.1)
    assert ends == [None]
