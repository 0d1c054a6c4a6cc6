"""``write``: create or overwrite a file (through the editor when the document is open).

An overwrite keeps what changed as a unified ``patch`` in ``details`` (as ``edit`` does), so the
chats can show it; not for files too big to diff quickly, nor when the client owns every file
(ACP's ``fs``), which would cost a read request of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.tools.base import (
    ClientFileSystem,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    text_result,
)
from pi_lsp.tools.edit_diff import generate_unified_patch, normalize_to_lf, strip_bom
from pi_lsp.tools.files import file_mutation_lock, load_text, store_text
from pi_lsp.tools.paths import resolve_to_cwd
from pi_lsp.tools.truncate import byte_length

MAX_DIFFED_BYTES = 256 * 1024
"""Above this size (before or after), an overwrite's patch is not worked out."""
MAX_PATCH_BYTES = 64 * 1024
"""A longer patch is left out of the session file."""


class WriteTool(Tool):
    name = "write"
    description = (
        "Write a file with the given content: a missing file is created, an existing one is "
        "replaced entirely. Missing parent folders are created. Use it for new files and "
        "complete rewrites; use edit for changes to part of a file."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write (relative to the workspace or absolute)",
            },
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
        "required": ["path", "content"],
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        raw_path: str = arguments["path"]
        content: str = arguments["content"]
        path = resolve_to_cwd(raw_path, context.cwd)
        if path.is_dir():
            raise ToolError(f"{raw_path} is a directory; give the path of a file to write.")
        async with file_mutation_lock(path):
            created = not path.exists() and context.editor.open_document_text(path) is None
            previous = None if created else await _previous_text(path, context)
            via_editor = await store_text(path, content, context)
        size = byte_length(content)
        where = " (through the editor)" if via_editor else ""
        details: dict[str, Any] = {
            "path": str(path),
            "bytes": size,
            "created": created,
            "viaEditor": via_editor,
        }
        patch = _patch(raw_path, previous, content)
        if patch is not None:
            details["patch"] = patch
        return text_result(f"Wrote {size} bytes to {raw_path}{where}", details)


async def _previous_text(path: Path, context: ToolContext) -> str | None:
    if isinstance(context.editor, ClientFileSystem):
        return None
    try:
        if path.is_file() and path.stat().st_size > MAX_DIFFED_BYTES:
            return None
    except OSError:
        return None
    found = await load_text(path, context)
    return found[0] if found is not None else None


def _patch(raw_path: str, previous: str | None, content: str) -> str | None:
    if previous is None or len(previous) > MAX_DIFFED_BYTES or len(content) > MAX_DIFFED_BYTES:
        return None
    before, after = normalize_to_lf(strip_bom(previous)[1]), normalize_to_lf(strip_bom(content)[1])
    patch = generate_unified_patch(raw_path, before, after)
    return patch if len(patch) <= MAX_PATCH_BYTES else None
