"""Searching the index: matching entries with their session, newest first or best match first.

Newest first walks the matches in rowid order, which is time order (see ``database.py``), and
stops at the limit; best match first ranks (bm25) the newest ``RANKED_MATCHES`` matches. The
total is counted inside FTS5 without touching the entries, and only the hits' previews are cut
(FTS5's ``snippet``, around the matched words), so a word found a million times costs the count
and one page.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Literal

import attrs

from pi_lsp.project_memory.query import parse_query

Order = Literal["newest", "best"]
PREVIEW_TOKENS = 24
COUNT_LIMIT = 10_000
"""Matches counted at most (outside one session)."""
CHUNK_ROWS = 200
"""Matches looked up at a time while hits are gathered."""
RANKED_MATCHES = 1_000
"""Best match first ranks the newest this many matches."""


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
    capped: bool = False
    """``total`` stopped counting at ``COUNT_LIMIT``: there are more matches."""


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
        return SearchPage(0, [], False)
    scope = _scope(connection, only)
    if scope is None:
        return SearchPage(0, [], False)
    candidates = (
        _best_candidates(connection, expression, scope)
        if order == "best"
        else _newest_candidates(connection, expression, scope, limit)
    )
    hits: list[tuple[int, Hit]] = []
    for chunk in candidates:
        hits += _hits(connection, chunk, only)
        if len(hits) >= limit:
            break
    hits = hits[:limit]
    previews = _previews(connection, expression, [hit_row for hit_row, _ in hits])
    page = [attrs.evolve(hit, preview=previews.get(row, "")) for row, hit in hits]
    total, capped = _total(connection, expression, only, scope)
    return SearchPage(total, page, capped)


@attrs.frozen
class _Scope:
    """The rows a search looks at: all of them, or the time span of one session's entries."""

    lowest: int | None = None
    highest: int | None = None
    files: tuple[int, ...] = ()

    def rowid_condition(self) -> tuple[str, tuple[int, ...]]:
        if self.lowest is None or self.highest is None:
            return "", ()
        return " AND rowid BETWEEN ? AND ?", (self.lowest, self.highest)


def _scope(connection: sqlite3.Connection, only: SearchFilter) -> _Scope | None:
    """``None`` when the session asked for has no entries indexed."""
    if only.session_id is None:
        return _Scope()
    files = tuple(
        row[0]
        for row in connection.execute(
            "SELECT file FROM files WHERE session_id = ?", (only.session_id,)
        )
    )
    if not files:
        return None
    marks = ",".join("?" * len(files))
    lowest, highest = connection.execute(
        f"SELECT min(row), max(row) FROM entries WHERE file IN ({marks})", files
    ).fetchone()
    return None if lowest is None else _Scope(lowest, highest, files)


def _newest_candidates(
    connection: sqlite3.Connection, expression: str, scope: _Scope, limit: int
) -> Iterator[list[int]]:
    """Matching rows, newest first, in chunks (FTS5 walks the rowids down and stops)."""
    within, bounds = scope.rowid_condition()
    chunk = max(CHUNK_ROWS, limit * 2)
    below: int | None = None
    while True:
        cursor = "" if below is None else " AND rowid < ?"
        rows = [
            row
            for (row,) in connection.execute(
                f"SELECT rowid FROM entry_text WHERE entry_text MATCH ?{within}{cursor} "
                "ORDER BY rowid DESC LIMIT ?",
                (expression, *bounds, *(() if below is None else (below,)), chunk),
            )
        ]
        if rows:
            yield rows
        if len(rows) < chunk:
            return
        below = rows[-1]


def _best_candidates(
    connection: sqlite3.Connection, expression: str, scope: _Scope
) -> Iterator[list[int]]:
    """The newest ``RANKED_MATCHES`` matching rows, best (lowest bm25) first, in chunks."""
    within, bounds = scope.rowid_condition()
    scored = connection.execute(
        f"SELECT rowid, bm25(entry_text) FROM entry_text WHERE entry_text MATCH ?{within} "
        "ORDER BY rowid DESC LIMIT ?",
        (expression, *bounds, RANKED_MATCHES),
    ).fetchall()
    scored.sort(key=lambda pair: (pair[1], -pair[0]))
    for start in range(0, len(scored), CHUNK_ROWS):
        yield [row for row, _ in scored[start : start + CHUNK_ROWS]]


def _hits(
    connection: sqlite3.Connection, rows: list[int], only: SearchFilter
) -> list[tuple[int, Hit]]:
    """The hits of ``rows`` that pass ``only``, in the order of ``rows``."""
    marks = ",".join("?" * len(rows))
    found = {
        row: Hit(session_id, path, name, entry_id, entry_type, role, "", timestamp, bool(on_path))
        for row, session_id, path, name, entry_id, entry_type, role, timestamp, on_path in (
            connection.execute(
                "SELECT e.row, f.session_id, f.path, f.name, e.entry_id, e.type, e.role, "
                "e.timestamp, e.on_path FROM entries e JOIN files f ON f.file = e.file "
                f"WHERE e.row IN ({marks})",
                rows,
            )
        )
    }
    return [(row, found[row]) for row in rows if row in found and _passes(found[row], only)]


def _passes(hit: Hit, only: SearchFilter) -> bool:
    if only.session_id is not None and hit.session_id != only.session_id:
        return False
    return only.excluded_session_id is None or hit.session_id != only.excluded_session_id


def _total(
    connection: sqlite3.Connection, expression: str, only: SearchFilter, scope: _Scope
) -> tuple[int, bool]:
    """How many entries match in the scope, and whether counting stopped at ``COUNT_LIMIT``
    (counting a million matches costs more than the search itself)."""
    if only.session_id is not None:
        return _count_in_session(connection, expression, scope), False
    counted = connection.execute(
        "SELECT count(*) FROM (SELECT rowid FROM entry_text WHERE entry_text MATCH ? "
        "ORDER BY rowid DESC LIMIT ?)",
        (expression, COUNT_LIMIT + 1),
    ).fetchone()[0]
    if counted > COUNT_LIMIT:
        return COUNT_LIMIT, True
    if only.excluded_session_id is not None:
        excluded = _scope(connection, SearchFilter(session_id=only.excluded_session_id))
        if excluded is not None:
            counted -= _count_in_session(connection, expression, excluded)
    return counted, False


def _count_in_session(connection: sqlite3.Connection, expression: str, scope: _Scope) -> int:
    within, bounds = scope.rowid_condition()
    marks = ",".join("?" * len(scope.files))
    return connection.execute(
        f"SELECT count(*) FROM entries WHERE file IN ({marks}) AND row IN "
        f"(SELECT rowid FROM entry_text WHERE entry_text MATCH ?{within})",
        (*scope.files, expression, *bounds),
    ).fetchone()[0]


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
