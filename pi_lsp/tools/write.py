"""``write``: create or overwrite a file (through the editor when the document is open)."""

from __future__ import annotations

from typing import Any, ClassVar

from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.tools.files import file_mutation_lock, store_text
from pi_lsp.tools.paths import resolve_to_cwd
from pi_lsp.tools.truncate import byte_length


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
            via_editor = await store_text(path, content, context)
        size = byte_length(content)
        where = " (through the editor)" if via_editor else ""
        return text_result(
            f"Wrote {size} bytes to {raw_path}{where}",
            {"path": str(path), "bytes": size, "created": created, "viaEditor": via_editor},
        )
