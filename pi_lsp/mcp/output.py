"""The size limit of MCP results' model-facing text, as pi 1.6's ``output-limit.js``: text over
20 KB keeps its start and end around a ``…N chars truncated…`` marker in Codex's format, and the
full text is saved to a file the model can read."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from typing import Any

MCP_OUTPUT_MAX_BYTES = 20 * 1024

SaveOutput = Callable[[bytes, str], str]
"""Saves data under a file extension; returns the path."""


def save_to_temp_file(data: bytes, extension: str) -> str:
    """pi's ``writeOutputFile("pi-mcp", …)``: a new file in the system's temp folder."""
    descriptor, path = tempfile.mkstemp(prefix="pi-mcp-", suffix=extension)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    return path


def limit_content(
    content: list[dict[str, Any]], save: SaveOutput | None = save_to_temp_file
) -> tuple[list[dict[str, Any]], str | None]:
    """``content`` within the limit, and the path of the full text when it was cut."""
    combined = "\n".join(block["text"] for block in content if block.get("type") == "text")
    cut = truncate_middle(combined, MCP_OUTPUT_MAX_BYTES)
    if cut is None:
        return content, None
    text, total_bytes, total_lines = cut
    full_path, where = None, ""
    if save is not None:
        try:
            full_path = save(combined.encode("utf-8"), ".txt")
            where = f"\n\n[Full output: {full_path} (read it with offset/limit)]"
        except OSError as problem:
            where = f"\n\n[Could not save the full output: {problem}]"
    tokens = math.ceil(total_bytes / 4)
    header = f"Warning: truncated output (original token count: {tokens})"
    limited = f"{header}\nTotal output lines: {total_lines}\n\n{text}{where}"
    images = [block for block in content if block.get("type") == "image"]
    return [{"type": "text", "text": limited}, *images], full_path


def truncate_middle(text: str, max_bytes: int) -> tuple[str, int, int] | None:
    """(cut text, total bytes, total lines), or None when ``text`` fits: half of ``max_bytes``
    from each end, cut at character boundaries, with the count of removed characters between."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return None

    def is_boundary(index: int) -> bool:
        return index >= len(data) or (data[index] & 0xC0) != 0x80

    head_end = max_bytes // 2
    while head_end > 0 and not is_boundary(head_end):
        head_end -= 1
    tail_start = len(data) - (max_bytes - max_bytes // 2)
    while tail_start < len(data) and not is_boundary(tail_start):
        tail_start += 1
    head = data[:head_end].decode("utf-8")
    tail = data[tail_start:].decode("utf-8")
    removed = len(data[head_end:tail_start].decode("utf-8"))
    lines = len(text.split("\n")) - (1 if text.endswith("\n") else 0)
    return f"{head}…{removed} chars truncated…{tail}", len(data), lines
