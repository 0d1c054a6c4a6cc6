"""The agent's tools over the project's memory: ``search_sessions`` and ``read_session_entry``.

The model can look up what was said in the workspace's other sessions (pi's too): a search gives
short excerpts with their session and entry ids, and reading an entry gives it with a few entries
around it on its branch. Results follow the output limits of the other tools (``truncate_head``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from pi_lsp.errors import NotASessionError
from pi_lsp.project_memory.extract import entry_role, indexed_text
from pi_lsp.project_memory.search import Hit, SearchFilter
from pi_lsp.project_memory.service import ProjectMemory, SearchResult
from pi_lsp.session.paths import index_entries, walk_to_root
from pi_lsp.session.store import is_session_header, parse_session_bytes
from pi_lsp.session.stored_entry import StoredEntry
from pi_lsp.session.timestamps import epoch_ms_to_iso
from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, limit_argument, text_result
from pi_lsp.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head, truncation_details

SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
CONTEXT_DEFAULT = 2
CONTEXT_MAX = 10
ENTRY_SHOWN_CHARS = 4_000


class SearchSessionsTool(Tool):
    name = "search_sessions"
    description = (
        "Search this project's other sessions (earlier conversations, pi's included) for what "
        'was said or done: words, a "quoted phrase", -word to leave out. Returns short excerpts '
        "with their session and entry ids, newest first; read one in full with "
        "read_session_entry."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {
                "type": "integer",
                "description": f"How many excerpts (default {SEARCH_DEFAULT_LIMIT}, "
                f"at most {SEARCH_MAX_LIMIT})",
            },
        },
        "required": ["query"],
    }

    def __init__(self, memory: ProjectMemory) -> None:
        self.memory = memory

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        query = str(arguments["query"])
        if not query.strip():
            raise ToolError("query is empty: give words or a quoted phrase to look for")
        limit = min(limit_argument(arguments, SEARCH_DEFAULT_LIMIT), SEARCH_MAX_LIMIT)
        result = await asyncio.to_thread(
            self.memory.search,
            query,
            limit=limit,
            only=SearchFilter(excluded_session_id=context.session_id),
        )
        return _limited(_search_text(query, result), {"total": result.page.total})


def _search_text(query: str, result: SearchResult) -> str:
    page, progress = result.page, result.progress
    lines = [_hit_line(hit) for hit in page.hits]
    if not lines:
        lines = [f"No entry of another session matches {query!r}."]
    elif page.total > len(page.hits):
        total = f"{page.total}+" if page.capped else str(page.total)
        lines.append(f"({total} matches; these are the newest {len(page.hits)})")
    if not progress.complete:
        lines.append(
            f"(Still indexing: {progress.indexed_files} of {progress.known_files} session files "
            "so far; a search later may find more.)"
        )
    return "\n".join(lines)


def _hit_line(hit: Hit) -> str:
    when = epoch_ms_to_iso(hit.timestamp_ms)[:16] if hit.timestamp_ms is not None else "?"
    name = f' "{hit.session_name}"' if hit.session_name else ""
    kind = hit.role or hit.type or "entry"
    return f"- session {hit.session_id}{name}, entry {hit.entry_id} ({kind}, {when}): {hit.preview}"


class ReadSessionEntryTool(Tool):
    name = "read_session_entry"
    description = (
        "Read one entry of another session of this project (a search_sessions result) with the "
        "entries just before and after it on its branch."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "session_id": {"type": "string", "description": "The session id of the result"},
            "entry_id": {"type": "string", "description": "The entry id of the result"},
            "context": {
                "type": "integer",
                "description": f"Entries shown before and after it (default {CONTEXT_DEFAULT}, "
                f"at most {CONTEXT_MAX})",
            },
        },
        "required": ["session_id", "entry_id"],
    }

    def __init__(self, memory: ProjectMemory) -> None:
        self.memory = memory

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        session_id, entry_id = str(arguments["session_id"]), str(arguments["entry_id"])
        around = arguments.get("context")
        around = CONTEXT_DEFAULT if around is None else max(0, min(int(around), CONTEXT_MAX))
        path = await asyncio.to_thread(self.memory.session_file, session_id)
        if path is None:
            raise ToolError(f"No session {session_id} in this project (use search_sessions)")
        shown = await asyncio.to_thread(_entries_around, path, entry_id, around)
        text = "\n\n".join(_entry_text(entry, entry_id) for entry in shown)
        return _limited(f"Session {session_id}, around entry {entry_id}:\n\n{text}", None)


def _entries_around(path: Path, entry_id: str, around: int) -> list[StoredEntry]:
    try:
        loaded = parse_session_bytes(path.read_bytes(), path)
    except (OSError, NotASessionError) as error:
        raise ToolError(f"The session file cannot be read: {error}") from None
    entries = [entry for entry in loaded.lines[1:] if not is_session_header(entry)]
    by_id = index_entries(entries)
    target = by_id.get(entry_id)
    if target is None:
        raise ToolError(f"No entry {entry_id} in that session")
    before = walk_to_root(by_id, target)[-(around + 1) :]
    return [*before, *_descendants(entries, target, around)]


def _descendants(entries: list[Any], start: Any, count: int) -> list[Any]:
    """Up to ``count`` entries below ``start``, following its latest child each step."""
    latest_child: dict[Any, Any] = {}
    for entry in entries:
        latest_child[entry.parentId] = entry
    found: list[Any] = []
    current = start
    while len(found) < count and current.id in latest_child:
        current = latest_child[current.id]
        found.append(current)
    return found


def _entry_text(entry: StoredEntry, wanted_id: str) -> str:
    marker = " <- this entry" if entry.id == wanted_id else ""
    kind = entry_role(entry) or entry.type
    text = indexed_text(entry)[:ENTRY_SHOWN_CHARS]
    when = entry.get("timestamp")
    return f"[{kind} {entry.id} {when}]{marker}\n{text or '(no text)'}"


def _limited(text: str, details: dict[str, Any] | None) -> ToolResult:
    truncation = truncate_head(text)
    output = truncation["content"]
    if truncation["truncated"]:
        output += f"\n\n[Output cut at the {format_size(DEFAULT_MAX_BYTES)} limit]"
        details = {**(details or {}), "truncation": truncation_details(truncation)}
    return text_result(output, details)


def memory_tools(memory: ProjectMemory) -> list[Tool]:
    return [SearchSessionsTool(memory), ReadSessionEntryTool(memory)]
