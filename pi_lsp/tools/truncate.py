"""Output limits shared by the tools (ports of pi 0.84.2's ``truncate.js``).

Two limits apply together, whichever is reached first: a number of lines (2000) and a number of
UTF-8 bytes (50 KB). Head truncation (for file reads) never returns a partial line; tail
truncation (for command output) keeps the end and may cut the one line it keeps.
The result dictionaries use pi's field names, since they are stored in tool-result ``details``.
"""

from __future__ import annotations

from typing import Any, TypedDict

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


def byte_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def split_lines_for_counting(content: str) -> list[str]:
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


class _Totals(TypedDict):
    """The sizes every result of one truncation shares."""

    total_lines: int
    total_bytes: int
    max_lines: int
    max_bytes: int


def _result(
    content: str,
    *,
    truncated: bool,
    truncated_by: str | None,
    total_lines: int,
    total_bytes: int,
    output_lines: int,
    output_bytes: int,
    max_lines: int,
    max_bytes: int,
    last_line_partial: bool = False,
    first_line_exceeds_limit: bool = False,
) -> dict[str, Any]:
    return {
        "content": content,
        "truncated": truncated,
        "truncatedBy": truncated_by,
        "totalLines": total_lines,
        "totalBytes": total_bytes,
        "outputLines": output_lines,
        "outputBytes": output_bytes,
        "lastLinePartial": last_line_partial,
        "firstLineExceedsLimit": first_line_exceeds_limit,
        "maxLines": max_lines,
        "maxBytes": max_bytes,
    }


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, Any]:
    """Keep the first lines that fit both limits (whole lines only)."""
    total_bytes = byte_length(content)
    lines = split_lines_for_counting(content)
    total_lines = len(lines)
    common: _Totals = {
        "total_lines": total_lines,
        "total_bytes": total_bytes,
        "max_lines": max_lines,
        "max_bytes": max_bytes,
    }
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _result(
            content,
            truncated=False,
            truncated_by=None,
            output_lines=total_lines,
            output_bytes=total_bytes,
            **common,
        )
    if byte_length(lines[0]) > max_bytes:
        return _result(
            "",
            truncated=True,
            truncated_by="bytes",
            output_lines=0,
            output_bytes=0,
            first_line_exceeds_limit=True,
            **common,
        )
    kept: list[str] = []
    used = 0
    truncated_by = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = byte_length(line) + (1 if index > 0 else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    text = "\n".join(kept)
    return _result(
        text,
        truncated=True,
        truncated_by=truncated_by,
        output_lines=len(kept),
        output_bytes=byte_length(text),
        **common,
    )


def _tail_bytes(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, Any]:
    """Keep the last lines that fit both limits; a single
    over-long last line is cut from its end."""
    total_bytes = byte_length(content)
    lines = split_lines_for_counting(content)
    total_lines = len(lines)
    common: _Totals = {
        "total_lines": total_lines,
        "total_bytes": total_bytes,
        "max_lines": max_lines,
        "max_bytes": max_bytes,
    }
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _result(
            content,
            truncated=False,
            truncated_by=None,
            output_lines=total_lines,
            output_bytes=total_bytes,
            **common,
        )
    kept: list[str] = []
    used = 0
    truncated_by = "lines"
    last_line_partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = byte_length(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                part = _tail_bytes(line, max_bytes)
                kept.append(part)
                used = byte_length(part)
                last_line_partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    text = "\n".join(kept)
    return _result(
        text,
        truncated=True,
        truncated_by=truncated_by,
        output_lines=len(kept),
        output_bytes=byte_length(text),
        last_line_partial=last_line_partial,
        **common,
    )


def truncation_details(truncation: dict[str, Any]) -> dict[str, Any]:
    """A truncation result for ``details``: everything but the text itself."""
    return {key: value for key, value in truncation.items() if key != "content"}


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters, marking the cut."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
