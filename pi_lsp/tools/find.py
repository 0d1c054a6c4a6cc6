"""``find``: files (and folders) whose path matches a glob pattern, in sorted order."""

from __future__ import annotations

import asyncio
import threading
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
from pi_lsp.tools.walk import GlobMatcher, walk

DEFAULT_LIMIT = 1000


class FindTool(Tool):
    name = "find"
    description = (
        "Find files by glob pattern. Returns the matching paths relative to the searched folder, "
        "sorted, folders with a trailing '/'. A pattern without '/' matches file names at any "
        "depth ('*.py'); one with '/' matches the relative path ('src/**/*.test.ts'). Honours "
        "hidden files and .gitignore, skips .git and node_modules; letter case is ignored unless "
        f"the pattern has a capital letter. Stops after {DEFAULT_LIMIT} results (change with "
        f"limit) or {DEFAULT_MAX_BYTES // 1024}KB of output."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'",
            },
            "path": {
                "type": "string",
                "description": "Folder to search in (default: the workspace)",
            },
            "limit": {
                "type": "number",
                "description": f"Maximum number of results (default: {DEFAULT_LIMIT})",
            },
        },
        "required": ["pattern"],
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        pattern: str = arguments["pattern"]
        root = resolve_to_cwd(arguments.get("path") or ".", context.cwd)
        limit = limit_argument(arguments, DEFAULT_LIMIT)
        require_directory(root)
        if not pattern.strip():
            raise ToolError("pattern must not be empty")

        # fd's rules: smart case; a pattern with "/" matches the whole path at any depth
        ignore_case = pattern == pattern.lower()
        root_prefix = root.as_posix().rstrip("/") + "/"
        if pattern.startswith(root_prefix):
            pattern = pattern[len(root_prefix) :] or "**"
        if "/" in pattern.rstrip("/") and not pattern.startswith(("/", "**/")) and pattern != "**":
            pattern = f"**/{pattern}"
        matcher = GlobMatcher(pattern.rstrip("/") or pattern, ignore_case)
        only_dirs = pattern.endswith("/")
        stop = threading.Event()

        def search() -> tuple[list[str], bool]:
            results: list[str] = []
            for relative, _path, is_dir in walk(root, include_dirs=True, stop=stop):
                if only_dirs and not is_dir:
                    continue
                if matcher.matches(relative):
                    results.append(relative + "/" if is_dir else relative)
                    if len(results) >= limit:
                        return results, True
            return results, False

        try:
            results, limit_reached = await asyncio.to_thread(search)
        except asyncio.CancelledError:
            stop.set()
            raise
        if not results:
            return text_result("No files found matching the pattern")
        stopped = Notice(
            f"Stopped at the limit of {limit} results. Use limit={limit * 2} for more, or "
            "narrow the pattern",
            "resultLimitReached",
            limit,
        )
        return listing_result(results, stopped if limit_reached else None)
