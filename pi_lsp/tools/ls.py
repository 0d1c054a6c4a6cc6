"""``ls``: the entries of one folder, sorted, folders marked with ``/``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    limit_argument,
    require_directory,
    text_result,
)
from pi_lsp.tools.listing import Notice, listing_result
from pi_lsp.tools.paths import resolve_to_cwd
from pi_lsp.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_LIMIT = 500


class LsTool(Tool):
    name = "ls"
    description = (
        "List a folder: entries sorted alphabetically, folders marked with a trailing '/', "
        f"hidden files included. Stops after {DEFAULT_LIMIT} entries (change with limit) or "
        f"{DEFAULT_MAX_BYTES // 1024}KB of output."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Folder to list (default: the workspace)"},
            "limit": {
                "type": "number",
                "description": f"Maximum number of entries (default: {DEFAULT_LIMIT})",
            },
        },
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        folder = resolve_to_cwd(arguments.get("path") or ".", context.cwd)
        limit = limit_argument(arguments, DEFAULT_LIMIT)
        require_directory(folder)
        try:
            entries, limit_reached = await asyncio.to_thread(_list, folder, limit)
        except OSError as error:
            raise ToolError(f"Cannot read the folder: {error.strerror or error}") from None
        if not entries:
            return text_result("(empty directory)")
        stopped = Notice(
            f"Stopped at the limit of {limit} entries. Use limit={limit * 2} for more",
            "entryLimitReached",
            limit,
        )
        return listing_result(entries, stopped if limit_reached else None)


def _list(folder: Path, limit: int) -> tuple[list[str], bool]:
    names = sorted(os.listdir(folder), key=lambda name: (name.lower(), name))
    out: list[str] = []
    for name in names:
        if len(out) >= limit:
            return out, True
        full = folder / name
        try:
            is_dir = full.is_dir()  # follows symlinks, like pi's stat
            full.stat()
        except OSError:
            continue  # dangling link or vanished entry
        out.append(name + "/" if is_dir else name)
    return out, False
