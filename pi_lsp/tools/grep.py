"""``grep``: search file contents with ripgrep when it is installed, else in pure Python.

Both backends skip ``.git`` and ``node_modules`` and what ``.gitignore`` files ignore (ripgrep
exactly, the fallback loosely), include hidden files, and print ``path:line: text`` (context lines
as ``path-line- text``), paths relative to the searched folder. Files are searched on disk:
unsaved editor changes are not seen.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.tools.listing import Notice, listing_result
from pi_lsp.tools.paths import resolve_to_cwd
from pi_lsp.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    split_lines_for_counting,
    truncate_line,
)
from pi_lsp.tools.walk import GlobMatcher, walk

DEFAULT_LIMIT = 100
_BINARY_SNIFF = 8192
_RG_LINE_LIMIT = 64 * 1024 * 1024

Match = tuple[Path, int, "str | None"]  # (file, line number, line text when known)


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents for a regular expression (or a literal string). Returns matching "
        "lines as path:line: text, paths relative to the searched folder. Honours .gitignore "
        f"and skips .git and node_modules. Stops after {DEFAULT_LIMIT} matches (change with "
        f"limit) or {DEFAULT_MAX_BYTES // 1024}KB of output; lines longer than "
        f"{GREP_MAX_LINE_LENGTH} characters are cut."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression (or literal text) to search for",
            },
            "path": {
                "type": "string",
                "description": "Folder or file to search (default: the workspace)",
            },
            "glob": {
                "type": "string",
                "description": (
                    "Only search files matching this glob, e.g. '*.py' or 'src/**/*.test.ts'"
                ),
            },
            "ignoreCase": {"type": "boolean", "description": "Ignore letter case (default: false)"},
            "literal": {
                "type": "boolean",
                "description": (
                    "Take pattern as literal text, not a regular expression (default: false)"
                ),
            },
            "context": {
                "type": "number",
                "description": "Lines of context to show before and after each match (default: 0)",
            },
            "limit": {
                "type": "number",
                "description": f"Maximum number of matches (default: {DEFAULT_LIMIT})",
            },
        },
        "required": ["pattern"],
    }

    use_ripgrep: bool = True  # tests switch this off to exercise the fallback

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        pattern: str = arguments["pattern"]
        search_path = resolve_to_cwd(arguments.get("path") or ".", context.cwd)
        glob = arguments.get("glob") or None
        ignore_case = bool(arguments.get("ignoreCase"))
        literal = bool(arguments.get("literal"))
        context_lines = int(arguments.get("context") or 0)
        context_lines = max(0, context_lines)
        limit = max(1, int(arguments.get("limit") or DEFAULT_LIMIT))
        if not search_path.exists():
            raise ToolError(f"Path not found: {search_path}")
        is_dir = search_path.is_dir()

        rg = shutil.which("rg") if self.use_ripgrep else None
        if rg is not None:
            matches, limit_reached = await _search_ripgrep(
                rg, pattern, search_path, glob, ignore_case, literal, limit
            )
        else:
            matches, limit_reached = await _search_python(
                pattern, search_path, is_dir, glob, ignore_case, literal, limit
            )
        if not matches:
            return text_result("No matches found")
        lines, lines_truncated = await asyncio.to_thread(
            _format_matches, matches, search_path, is_dir, context_lines
        )
        stopped = Notice(
            f"Stopped at the limit of {limit} matches. Use limit={limit * 2} for more, or "
            "narrow the pattern",
            "matchLimitReached",
            limit,
        )
        lines_cut = Notice(
            f"Some lines were cut to {GREP_MAX_LINE_LENGTH} characters; use read to see them whole",
            "linesTruncated",
            True,
        )
        return listing_result(
            lines, stopped if limit_reached else None, (lines_cut,) if lines_truncated else ()
        )


def _relative(path: Path, root: Path, root_is_dir: bool) -> str:
    if root_is_dir:
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            relative = ""
        if relative and relative != "." and not relative.startswith(".."):
            return relative
    return path.name


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return []
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _format_matches(
    matches: list[Match], root: Path, root_is_dir: bool, context_lines: int
) -> tuple[list[str], bool]:
    out: list[str] = []
    any_cut = False
    cache: dict[Path, list[str]] = {}
    for path, number, text in matches:
        shown = _relative(path, root, root_is_dir)
        if context_lines == 0 and text is not None:
            clean = text.replace("\r\n", "\n").replace("\r", "")
            clean = clean.removesuffix("\n")
            line, cut = truncate_line(clean)
            any_cut |= cut
            out.append(f"{shown}:{number}: {line}")
            continue
        if path not in cache:
            cache[path] = _read_lines(path)
        lines = cache[path]
        if not lines:
            out.append(f"{shown}:{number}: (could not read the file)")
            continue
        start = max(1, number - context_lines)
        end = min(len(lines), number + context_lines)
        for current in range(start, end + 1):
            line, cut = truncate_line(lines[current - 1].replace("\r", ""))
            any_cut |= cut
            sep = ":" if current == number else "-"
            out.append(f"{shown}{sep}{current}{sep} {line}")
    return out, any_cut


def _rg_text(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("text"), str):
        return value["text"]
    if isinstance(value.get("bytes"), str):
        try:
            return base64.b64decode(value["bytes"]).decode("utf-8", errors="replace")
        except ValueError:
            return None
    return None


async def _search_ripgrep(
    rg: str,
    pattern: str,
    search_path: Path,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    limit: int,
) -> tuple[list[Match], bool]:
    args = [
        "--json",
        "--line-number",
        "--color=never",
        "--hidden",
        "--glob",
        "!.git",
        "--glob",
        "!node_modules",
    ]
    if ignore_case:
        args.append("--ignore-case")
    if literal:
        args.append("--fixed-strings")
    if glob:
        args += ["--glob", glob]
    # run inside the searched folder: ripgrep matches path globs against paths relative to its
    # working directory
    is_dir = search_path.is_dir()
    rg_cwd = search_path if is_dir else search_path.parent
    args += ["--", pattern, "." if is_dir else search_path.name]
    process = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=str(rg_cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_RG_LINE_LIMIT,
    )
    assert process.stdout is not None and process.stderr is not None
    stderr_task = asyncio.create_task(process.stderr.read())
    matches: list[Match] = []
    limit_reached = False
    at_end = False
    try:
        while True:
            try:
                raw = await process.stdout.readline()
            except ValueError:  # a line beyond the reader's limit: skip it
                continue
            if not raw:
                at_end = True
                break
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if event.get("type") != "match":
                continue
            data = event.get("data") or {}
            file_text = _rg_text(data.get("path"))
            number = data.get("line_number")
            if file_text is None or not isinstance(number, int):
                continue
            file_path = Path(os.path.normpath(os.path.join(rg_cwd, file_text)))
            matches.append((file_path, number, _rg_text(data.get("lines"))))
            if len(matches) >= limit:
                limit_reached = True
                break
    finally:
        if not at_end and process.returncode is None:
            # os.kill, not process.kill(): Popen.send_signal() polls first and may reap the child
            # behind asyncio's back, which then reports exit code 255
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
        await process.wait()
        stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
    if not limit_reached and process.returncode not in (0, 1):
        raise ToolError(stderr or f"ripgrep exited with code {process.returncode}")
    return matches, limit_reached


async def _search_python(
    pattern: str,
    search_path: Path,
    is_dir: bool,
    glob: str | None,
    ignore_case: bool,
    literal: bool,
    limit: int,
) -> tuple[list[Match], bool]:
    try:
        regex = re.compile(
            re.escape(pattern) if literal else pattern, re.IGNORECASE if ignore_case else 0
        )
    except re.error as error:
        raise ToolError(f"Invalid regular expression {pattern!r}: {error}") from None
    matcher = GlobMatcher(glob) if glob else None
    stop = threading.Event()

    def search() -> tuple[list[Match], bool]:
        found: list[Match] = []
        candidates: Iterator[Path]
        if is_dir:
            candidates = (
                path
                for relative, path, _ in walk(search_path, include_dirs=False, stop=stop)
                if matcher is None or matcher.matches(relative) != matcher.negated
            )
        else:
            candidates = iter([search_path])
        for path in candidates:
            if stop.is_set():
                break
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:_BINARY_SNIFF]:
                continue
            text = data.decode("utf-8", errors="replace")
            for number, line in enumerate(split_lines_for_counting(text), 1):
                if regex.search(line.rstrip("\r")):
                    found.append((path, number, line))
                    if len(found) >= limit:
                        return found, True
        return found, False

    try:
        return await asyncio.to_thread(search)
    except asyncio.CancelledError:
        stop.set()
        raise
