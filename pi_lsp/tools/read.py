"""``read``: a file's text (the editor's unsaved text when the document is open) or an image."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.tools.files import editor_text
from pi_lsp.tools.paths import resolve_read_path, resolve_to_cwd
from pi_lsp.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    byte_length,
    format_size,
    truncate_head,
    truncation_details,
)

# The largest image (base64 text) sent inline; pi resizes bigger ones, pi-lsp omits them.
MAX_IMAGE_BASE64_BYTES = int(4.5 * 1024 * 1024)
_SNIFF_BYTES = 4100


def detect_image_mime_type(head: bytes) -> str | None:
    """The image type a file starts with (by content, not by name), or None for other files."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if head[3:4] == b"\xf7" else "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 16 and head[12:16] == b"IHDR":
        return "image/png"
    if head.startswith(b"GIF"):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _looks_like_bmp(head):
        return "image/bmp"
    return None


def _looks_like_bmp(head: bytes) -> bool:
    if len(head) < 26:
        return False
    file_size = int.from_bytes(head[2:6], "little")
    pixel_offset = int.from_bytes(head[10:14], "little")
    dib_size = int.from_bytes(head[14:18], "little")
    if file_size != 0 and file_size < 26:
        return False
    if pixel_offset < 14 + dib_size:
        return False
    if file_size != 0 and pixel_offset >= file_size:
        return False
    if dib_size == 12:
        planes, bits = int.from_bytes(head[22:24], "little"), int.from_bytes(head[24:26], "little")
    elif 40 <= dib_size <= 124 and len(head) >= 30:
        planes, bits = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)


INLINE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a file. Text files and images (jpg, png, gif, webp) are supported; images come back "
        f"as attachments. Text output stops after {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; use offset and limit to page "
        "through large files, continuing with offset until you have read all you need. Files "
        "open in the user's editor are read with their unsaved changes."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read (relative to the workspace or absolute)",
            },
            "offset": {"type": "number", "description": "First line to read, counting from 1"},
            "limit": {"type": "number", "description": "How many lines to read at most"},
        },
        "required": ["path"],
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        raw_path: str = arguments["path"]
        offset = arguments.get("offset")
        limit = arguments.get("limit")
        if offset is not None and not isinstance(offset, int):
            raise ToolError(f"offset must be a whole line number, got {offset}")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ToolError(f"limit must be a positive whole number of lines, got {limit}")

        path = resolve_to_cwd(raw_path, context.cwd)
        unsaved = await editor_text(context.editor, path)
        if unsaved is not None:
            return self._read_text(unsaved, raw_path, path, offset, limit, source="editor")

        path = resolve_read_path(raw_path, context.cwd)
        if not path.exists():
            raise ToolError(f"File not found: {raw_path}")
        if path.is_dir():
            raise ToolError(f"{raw_path} is a directory, not a file. Use ls to list it.")
        data = await asyncio.to_thread(path.read_bytes)
        mime_type = detect_image_mime_type(data[:_SNIFF_BYTES])
        if mime_type is not None:
            return self._read_image(data, mime_type, path)
        text = data.decode("utf-8", errors="replace")
        return self._read_text(text, raw_path, path, offset, limit, source="disk")

    @staticmethod
    def _read_image(data: bytes, mime_type: str, path: Path) -> ToolResult:
        details = {"path": str(path), "mimeType": mime_type, "bytes": len(data)}
        if mime_type not in INLINE_IMAGE_TYPES:
            return text_result(
                f"Read image file [{mime_type}]\n[Image left out: {mime_type} cannot be sent "
                "inline and pi-lsp does not convert images.]",
                details,
            )
        encoded = base64.b64encode(data).decode("ascii")
        if len(encoded) >= MAX_IMAGE_BASE64_BYTES:
            return text_result(
                f"Read image file [{mime_type}]\n[Image left out: it is {format_size(len(data))}, "
                f"above the {format_size(MAX_IMAGE_BASE64_BYTES)} inline image limit.]",
                details,
            )
        return ToolResult(
            content=[
                {"type": "text", "text": f"Read image file [{mime_type}]"},
                {"type": "image", "data": encoded, "mimeType": mime_type},
            ],
            details=details,
        )

    @staticmethod
    def _read_text(
        text: str, raw_path: str, path: Path, offset: int | None, limit: int | None, *, source: str
    ) -> ToolResult:
        all_lines = text.split("\n")
        total = len(all_lines)
        start = max(0, offset - 1) if offset else 0
        if start >= total:
            raise ToolError(f"Offset {offset} is past the end of the file ({total} lines in total)")
        first_line = start + 1
        if limit is not None:
            end = min(start + limit, total)
            selected = "\n".join(all_lines[start:end])
        else:
            end = total
            selected = "\n".join(all_lines[start:])
        truncation = truncate_head(selected)
        details: dict[str, Any] = {"path": str(path), "source": source, "totalLines": total}

        if truncation["firstLineExceedsLimit"]:
            size = format_size(byte_length(all_lines[start]))
            output = (
                f"[Line {first_line} is {size}, more than the {format_size(DEFAULT_MAX_BYTES)} "
                f"limit. Read a piece of it with bash: sed -n '{first_line}p' {raw_path} | head -c "
                f"{DEFAULT_MAX_BYTES}]"
            )
            details.update(
                startLine=first_line,
                endLine=first_line - 1,
                truncation=truncation_details(truncation),
            )
        elif truncation["truncated"]:
            last_line = first_line + truncation["outputLines"] - 1
            why = (
                ""
                if truncation["truncatedBy"] == "lines"
                else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
            )
            output = (
                f"{truncation['content']}\n\n[Showing lines {first_line}-{last_line} of "
                f"{total}{why}. Use offset={last_line + 1} to continue.]"
            )
            details.update(
                startLine=first_line, endLine=last_line, truncation=truncation_details(truncation)
            )
        elif limit is not None and end < total:
            output = (
                f"{truncation['content']}\n\n[{total - end} more lines in the file. "
                f"Use offset={end + 1} to continue.]"
            )
            details.update(startLine=first_line, endLine=end)
        else:
            output = truncation["content"]
            details.update(startLine=first_line, endLine=end)
        return text_result(output, details)
