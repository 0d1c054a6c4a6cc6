"""Searching the index: matching entries with their session, newest first or best match first.

The total counts every match; only ``limit`` hits are read, and only their previews are cut
(FTS5's ``snippet``, around the matched words), so a word found a hundred thousand times costs
the count and one page.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

import attrs

from pi_lsp.project_memory.query import parse_query

Order = Literal["newest", "best"]
PREVIEW_TOKENS = 24


@attrs.frozen
class Hit:
    session_id: str
    path: str
    session_name: str | None
    entry_id: str | None
    type: str | None
    role: str | None
    preview: str
    timestamp_ms: int | None
    on_active_path: bool


@attrs.frozen
class SearchPage:
    total: int
    hits: list[Hit]


@attrs.frozen
class SearchFilter:
    session_id: str | None = None
    """Only this session's entries."""
    excluded_session_id: str | None = None
    """Everything but this session's entries (the agent's own session)."""


EVERYTHING = SearchFilter()


def search_index(
    connection: sqlite3.Connection,
    query: str,
    *,
    limit: int,
    order: Order = "newest",
    only: SearchFilter = EVERYTHING,
) -> SearchPage:
    expression = parse_query(query).match_expression()
    if expression is None:
        return SearchPage(0, [])
    conditions, arguments = _conditions(expression, only)
    joined = (
        "FROM entry_text JOIN entries e ON e.row = entry_text.rowid "
        f"JOIN files f ON f.file = e.file WHERE {conditions}"
    )
    total = connection.execute(f"SELECT count(*) {joined}", arguments).fetchone()[0]
    ordering = "rank" if order == "best" else "e.timestamp DESC, e.row DESC"
    rows = connection.execute(
        "SELECT e.row, f.session_id, f.path, f.name, e.entry_id, e.type, e.role, e.timestamp, "
        f"e.on_path {joined} ORDER BY {ordering} LIMIT ?",
        (*arguments, limit),
    ).fetchall()
    previews = _previews(connection, expression, [row[0] for row in rows])
    hits = [
        Hit(
            session_id,
            path,
            name,
            entry_id,
            entry_type,
            role,
            previews.get(row, ""),
            timestamp,
            bool(on_path),
        )
        for row, session_id, path, name, entry_id, entry_type, role, timestamp, on_path in rows
    ]
    return SearchPage(total, hits)


def _conditions(expression: str, only: SearchFilter) -> tuple[str, list[object]]:
    conditions = ["entry_text MATCH ?", "f.session_id IS NOT NULL"]
    arguments: list[object] = [expression]
    if only.session_id is not None:
        conditions.append("f.session_id = ?")
        arguments.append(only.session_id)
    if only.excluded_session_id is not None:
        conditions.append("f.session_id != ?")
        arguments.append(only.excluded_session_id)
    return " AND ".join(conditions), arguments


def _previews(connection: sqlite3.Connection, expression: str, rows: list[int]) -> dict[int, str]:
    if not rows:
        return {}
    marks = ",".join("?" * len(rows))
    found = connection.execute(
        f"SELECT rowid, snippet(entry_text, 0, '', '', '…', {PREVIEW_TOKENS}) FROM entry_text "
        f"WHERE entry_text MATCH ? AND rowid IN ({marks})",
        (expression, *rows),
    )
    return {row: " ".join(preview.split()) for row, preview in found}
