"""Streaming command output with bounded memory (after pi 0.84.2's ``output-accumulator.js``).

Bytes are decoded incrementally as UTF-8; only a rolling tail of the text is kept for the result.
As soon as the output passes the line or byte limit, everything received so far — and all that
follows — goes to a temp file, whose path the result gives so the model can read the rest.
"""

from __future__ import annotations

import codecs
import os
import secrets
import tempfile
from pathlib import Path
from typing import IO, Any

from pi_lsp.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, byte_length, truncate_tail


class OutputAccumulator:
    def __init__(
        self,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_dir: Path | None = None,
        temp_prefix: str = "pi-bash",
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._max_rolling_bytes = max(max_bytes * 2, 1)
        self._temp_dir = temp_dir
        self._temp_prefix = temp_prefix
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._raw_chunks: list[bytes] = []
        self._tail = ""
        self._tail_bytes = 0
        self._tail_starts_at_line = True
        self.total_raw_bytes = 0
        self.total_bytes = 0
        self._completed_lines = 0
        self.total_lines = 0
        self.last_line_bytes = 0
        self._open_line = False
        self._finished = False
        self.temp_path: Path | None = None
        self._temp_file: IO[bytes] | None = None

    # -- input ---------------------------------------------------------------------------------

    def append(self, data: bytes) -> None:
        if self._finished:
            raise RuntimeError("output accumulator already finished")
        self.total_raw_bytes += len(data)
        self._add_text(self._decoder.decode(data))
        if self._temp_file is not None or self._needs_temp_file():
            self._ensure_temp_file()
            assert self._temp_file is not None
            self._temp_file.write(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        self._add_text(self._decoder.decode(b"", final=True))
        if self._needs_temp_file():
            self._ensure_temp_file()

    def close(self) -> None:
        """Close the temp file (it stays on disk)."""
        if self._temp_file is not None:
            self._temp_file.close()
            self._temp_file = None

    # -- output --------------------------------------------------------------------------------

    @property
    def truncated(self) -> bool:
        return self.total_lines > self.max_lines or self.total_bytes > self.max_bytes

    def snapshot(self, *, persist_if_truncated: bool = False) -> dict[str, Any]:
        """``{"content", "truncation", "fullOutputPath"}`` for the output so far."""
        tail = truncate_tail(self._snapshot_text(), self.max_lines, self.max_bytes)
        truncated = self.truncated
        truncated_by = None
        if truncated:
            truncated_by = tail["truncatedBy"] or (
                "bytes" if self.total_bytes > self.max_bytes else "lines"
            )
        truncation = {
            **tail,
            "truncated": truncated,
            "truncatedBy": truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
        }
        if persist_if_truncated and truncated:
            self._ensure_temp_file()
        if self._temp_file is not None:
            self._temp_file.flush()
        return {
            "content": truncation["content"],
            "truncation": truncation,
            "fullOutputPath": str(self.temp_path) if self.temp_path is not None else None,
        }

    # -- internals -----------------------------------------------------------------------------

    def _add_text(self, text: str) -> None:
        if not text:
            return
        size = byte_length(text)
        self.total_bytes += size
        self._tail += text
        self._tail_bytes += size
        if self._tail_bytes > self._max_rolling_bytes * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self.last_line_bytes += size
            self._open_line = True
        else:
            self._completed_lines += newlines
            rest = text[text.rindex("\n") + 1 :]
            self.last_line_bytes = byte_length(rest)
            self._open_line = bool(rest)
        self.total_lines = self._completed_lines + (1 if self._open_line else 0)

    def _trim_tail(self) -> None:
        data = self._tail.encode("utf-8", "surrogatepass")
        if len(data) <= self._max_rolling_bytes:
            self._tail_bytes = len(data)
            return
        start = len(data) - self._max_rolling_bytes
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        if start > 0:
            self._tail_starts_at_line = data[start - 1] == 0x0A
        self._tail = data[start:].decode("utf-8", "replace")
        self._tail_bytes = byte_length(self._tail)

    def _snapshot_text(self) -> str:
        if self._tail_starts_at_line:
            return self._tail
        newline = self._tail.find("\n")
        return self._tail if newline == -1 else self._tail[newline + 1 :]

    def _needs_temp_file(self) -> bool:
        return (
            self.total_raw_bytes > self.max_bytes
            or self.total_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _ensure_temp_file(self) -> None:
        if self.temp_path is not None:
            return
        folder = self._temp_dir if self._temp_dir is not None else Path(tempfile.gettempdir())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self._temp_prefix}-{secrets.token_hex(8)}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._temp_file = os.fdopen(fd, "wb")
        self.temp_path = path
        for chunk in self._raw_chunks:
            self._temp_file.write(chunk)
        self._raw_chunks = []
